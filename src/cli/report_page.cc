// The HTML of `zerotrain report` (report_command.h): static markup, Chart.js inlined, the
// runs as a JSON literal, and the script that draws them. Every canvas gets data-points
// and data-series after drawing, for tests and for people checking what was plotted.
#include <string>

#include "io/json_strict.h"

namespace zt {

namespace {

const char* kHead = R"(<!doctype html>
<html><head><meta charset="utf-8"><title>zerotrain report</title>
<style>
body { font-family: sans-serif; margin: 24px auto; max-width: 1100px; color: #222; }
.chart { position: relative; height: 320px; margin-bottom: 28px; }
pre { background: #f5f5f5; padding: 8px; overflow: auto; font-size: 12px; }
table { border-collapse: collapse; } td, th { border: 1px solid #ccc; padding: 3px 8px; text-align: left; }
</style>
<script>
)";

const char* kBody = R"(</script></head><body>
<h1>zerotrain report</h1>
<p id="runs"></p>
<h2>Loss</h2><div class="chart"><canvas id="loss"></canvas></div>
<h2>Learning rate</h2><div class="chart"><canvas id="lr"></canvas></div>
<h2>Throughput and MFU</h2><div class="chart"><canvas id="throughput"></canvas></div>
<h2>Wall-clock breakdown per step (first run)</h2><div class="chart"><canvas id="breakdown"></canvas></div>
<h2>Mixture of experts</h2><div class="chart"><canvas id="moe"></canvas></div>
<h2>Memory per rank against the estimate (first run)</h2><div class="chart"><canvas id="memory"></canvas></div>
<h2>Communication</h2><div id="comm"></div>
<h2>Configuration</h2><div id="config"></div>
<h2>Machine</h2><div id="machine"></div>
<script>
const RUNS = )";

const char* kScript = R"(;
const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b'];
const color = i => COLORS[i % COLORS.length];
function pts(xs, ys) {
  const out = [];
  for (let i = 0; i < xs.length; i++) if (ys && ys[i] !== null && ys[i] !== undefined) out.push({x: xs[i], y: ys[i]});
  return out;
}
function draw(id, type, datasets, scales, labels) {
  const canvas = document.getElementById(id);
  new Chart(canvas, {type: type, data: {labels: labels, datasets: datasets},
                     options: {animation: false, responsive: true, maintainAspectRatio: false, scales: scales}});
  canvas.dataset.points = datasets.reduce((n, d) => n + d.data.length, 0);
  canvas.dataset.series = datasets.length;
}
const linearX = {type: 'linear', title: {display: true, text: 'step'}};
document.getElementById('runs').textContent = 'Runs: ' + RUNS.map(r => r.name).join(', ');
const loss = [];
RUNS.forEach((r, i) => {
  const m = r.metrics;
  loss.push({label: r.name + ' train loss', data: pts(m.step, m.loss), borderColor: color(i), pointRadius: 0, borderWidth: 2});
  const ev = pts(m.step, m.val_loss);
  if (ev.length) loss.push({label: r.name + ' eval loss', data: ev, borderColor: color(i), borderDash: [6, 3], pointRadius: 3});
});
draw('loss', 'line', loss, {x: linearX, y: {title: {display: true, text: 'loss'}}});
draw('lr', 'line', RUNS.map((r, i) => ({label: r.name, data: pts(r.metrics.step, r.metrics.lr), borderColor: color(i),
                                       pointRadius: 0})), {x: linearX});
const tp = [];
RUNS.forEach((r, i) => {
  const m = r.metrics, rep = r.report;
  tp.push({label: r.name + ' tokens/s', data: pts(m.step, m.tokens_per_s), borderColor: color(i), pointRadius: 0, yAxisID: 'y'});
  if (rep && rep.peak_flops > 0) {
    const mfu = m.tokens_per_s.map(t => t === null ? null : 100 * t * rep.flops_per_token / rep.peak_flops);
    tp.push({label: r.name + ' MFU %', data: pts(m.step, mfu), borderColor: color(i), borderDash: [4, 4], pointRadius: 0,
             yAxisID: 'y1'});
  }
});
draw('throughput', 'line', tp, {x: linearX, y: {position: 'left', title: {display: true, text: 'tokens/s'}},
                                y1: {position: 'right', title: {display: true, text: 'MFU %'}, grid: {drawOnChartArea: false}}});
const moe = [];
RUNS.forEach((r, i) => {
  const m = r.metrics;
  if (!m.moe_aux_loss) return;
  moe.push({label: r.name + ' balance loss', data: pts(m.step, m.moe_aux_loss), borderColor: color(i), pointRadius: 0, yAxisID: 'y'});
  moe.push({label: r.name + ' load imbalance (max / mean tokens per expert)', data: pts(m.step, m.moe_imbalance),
            borderColor: color(i), borderDash: [4, 4], pointRadius: 0, yAxisID: 'y1'});
  moe.push({label: r.name + ' dropped token slots', data: pts(m.step, m.moe_dropped), borderColor: color(i),
            borderDash: [1, 3], pointRadius: 2, yAxisID: 'y2'});
});
if (moe.length) {
  draw('moe', 'line', moe, {x: linearX, y: {position: 'left', title: {display: true, text: 'balance loss'}},
                            y1: {position: 'right', title: {display: true, text: 'imbalance'}, grid: {drawOnChartArea: false}},
                            y2: {position: 'right', title: {display: true, text: 'dropped'}, grid: {drawOnChartArea: false}}});
} else {
  document.getElementById('moe').parentNode.textContent = 'No run has experts.';
}
const m0 = RUNS[0].metrics;
draw('breakdown', 'bar', [['forward_ms', 'forward'], ['backward_ms', 'backward'], ['optimizer_ms', 'optimizer step']]
       .map(([k, l], i) => ({label: l + ' (ms)', data: m0[k], backgroundColor: color(i)})),
     {x: {stacked: true, title: {display: true, text: 'step'}}, y: {stacked: true, title: {display: true, text: 'ms'}}}, m0.step);
const rep0 = RUNS[0].report;
if (rep0) {
  const MiB = b => b / 1048576;
  const states = rep0.ranks.map(r => MiB(r.param_bytes + r.grad_bytes + r.optimizer_bytes + r.bucket_bytes + r.activation_bytes));
  draw('memory', 'bar', [
    {label: 'peak RSS (MiB, measured)', data: rep0.ranks.map(r => MiB(r.peak_rss_bytes)), backgroundColor: color(0)},
    {label: 'model states, buffers and activations (MiB, measured)', data: states, backgroundColor: color(2)},
    {label: 'estimate (MiB, zerotrain estimate)', data: rep0.estimate.map(e => MiB(e.total_bytes)), backgroundColor: color(3)}],
    {y: {title: {display: true, text: 'MiB'}}}, rep0.ranks.map(r => 'rank ' + r.rank));
} else {
  document.getElementById('memory').parentNode.textContent = 'No run_report.json in ' + RUNS[0].name + '.';
}
function section(id, fill) {
  const el = document.getElementById(id);
  RUNS.forEach(r => {
    const h = document.createElement('h3');
    h.textContent = r.name;
    el.appendChild(h);
    el.appendChild(fill(r));
  });
}
const pre = text => { const p = document.createElement('pre'); p.textContent = text; return p; };
section('comm', r => pre(r.report ? r.report.communication : '(no run_report.json)'));
section('config', r => pre(r.report ? JSON.stringify(r.report.config, null, 1) : '(no run_report.json)'));
section('machine', r => {
  const t = document.createElement('table');
  for (const [k, v] of Object.entries(r.report ? r.report.machine : {})) {
    const row = t.insertRow();
    row.insertCell().textContent = k;
    row.insertCell().textContent = String(v);
  }
  return t;
});
</script></body></html>
)";

}  // namespace

std::string report_page(const Json& runs, const std::string& chart_js) {
  std::string data = runs.dump();
  for (size_t at = 0; (at = data.find("</", at)) != std::string::npos; at += 3) data.replace(at, 2, "<\\/");
  return std::string(kHead) + chart_js + kBody + data + kScript;
}

}  // namespace zt
