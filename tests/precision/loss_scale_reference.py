#!/usr/bin/env python3
"""An independent statement of DeepSpeed's dynamic fp16 loss-scale rule, for
src/optim/loss_scaler_test.cc. Written from the rule as documented (DeepSpeed's
runtime/fp16/loss_scaler.py and its config keys), not from zerotrain's code.

  loss_scale_reference.py POWER WINDOW HYSTERESIS CONSECUTIVE MIN_SCALE OVERFLOWS
OVERFLOWS is a string of 0/1, one per step. Prints one line per step: the scale after the
step's update, or "error" when an overflow happens at the minimum scale (the run stops).
"""
import sys


def main(argv):
    power, window, hysteresis = int(argv[1]), int(argv[2]), int(argv[3])
    consecutive, min_scale, flags = argv[4] == "1", float(argv[5]), argv[6]
    scale = 2.0 ** power
    budget = hysteresis            # overflows tolerated before the scale drops
    last_overflow = -1             # step index of the last overflow
    for step, flag in enumerate(flags):
        if flag == "1":
            if budget == 1 or hysteresis == 1:
                if scale == min_scale:
                    print("error")
                    return 0
                scale = max(scale / 2.0, min_scale)
            else:
                budget -= 1
            last_overflow = step
        else:
            if consecutive:
                budget = hysteresis
            if (step - last_overflow) % window == 0:
                if not consecutive:
                    budget = hysteresis
                scale *= 2.0
        print(repr(scale))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
