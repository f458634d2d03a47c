extension ChaosReportPage {
    /// Draws the three charts from the page's `report-data` with the inlined Chart.js: latency (p50, p99) and
    /// throughput per bucket, and a lane per plugin with its states as floating bars. A small plugin of its own
    /// shades each fault's window and names it (kind and targets) behind every chart, and marks restarts on the
    /// lanes: no annotation plugin to vendor. No animation, so a screenshot shows the finished charts.
    /// `window.chaosReport` exposes what was drawn, for the browser test.
    static let script = #"""
        (function () {
          "use strict";
          const data = JSON.parse(document.getElementById("report-data").textContent);
          const end = data.durationMs / 1000;
          const shades = { kill: "rgba(220,38,38,0.13)", stop: "rgba(217,119,6,0.16)", flood: "rgba(147,51,234,0.13)",
            pipes: "rgba(37,99,235,0.13)", slowStart: "rgba(13,148,136,0.14)", crashOnRestore: "rgba(219,39,119,0.13)" };
          const states = { ready: "#34d399", starting: "#93c5fd", restarting: "#fbbf24", stopping: "#d1d5db",
            stopped: "#9ca3af", failed: "#ef4444", lazy: "#e5e7eb", hibernated: "#c4b5fd", hung: "#f97316",
            quarantined: "#a855f7", killed: "#fb7185", crashed: "#f43f5e" };
          const drawn = { labels: [], restarts: 0 };

          const faultWindows = {
            id: "faultWindows",
            beforeDatasetsDraw(chart, args, options) {
              const { ctx, chartArea: area, scales: { x } } = chart;
              ctx.save();
              ctx.font = "11px system-ui, sans-serif";
              data.faultWindows.forEach((fault, index) => {
                const from = x.getPixelForValue(fault.startMs / 1000);
                const to = Math.max(from + 3, x.getPixelForValue((fault.endMs ?? fault.startMs) / 1000));
                const left = Math.max(area.left, from), right = Math.min(area.right, to);
                if (right <= left) return;
                ctx.fillStyle = shades[fault.kind] || "rgba(107,114,128,0.13)";
                ctx.fillRect(left, area.top, right - left, area.bottom - area.top);
                if (options.labels) {
                  ctx.fillStyle = "#374151";
                  ctx.fillText(fault.label, left + 3, area.top + 12 + (index % 4) * 13);
                  drawn.labels.push(fault.label);
                }
              });
              if (data.seconds < end) {
                const at = x.getPixelForValue(data.seconds);
                ctx.strokeStyle = "#6b7280";
                ctx.setLineDash([4, 3]);
                ctx.beginPath();
                ctx.moveTo(at, area.top);
                ctx.lineTo(at, area.bottom);
                ctx.stroke();
                if (options.labels) {
                  ctx.fillStyle = "#6b7280";
                  ctx.fillText("load ends", at + 3, area.bottom - 4);
                }
              }
              ctx.restore();
            },
          };

          const restartMarks = {
            id: "restartMarks",
            afterDatasetsDraw(chart) {
              const { ctx, scales: { x, y } } = chart;
              ctx.save();
              ctx.fillStyle = "#111827";
              data.plugins.forEach((lane, row) => {
                const middle = y.getPixelForValue(row);
                lane.restarts.forEach((time) => {
                  const at = x.getPixelForValue(time / 1000);
                  ctx.beginPath();
                  ctx.moveTo(at - 5, middle - 11);
                  ctx.lineTo(at + 5, middle - 11);
                  ctx.lineTo(at, middle - 3);
                  ctx.fill();
                  drawn.restarts += 1;
                });
              });
              ctx.restore();
            },
          };

          const seconds = { type: "linear", min: 0, max: end, title: { display: true, text: "seconds" } };
          // One width for every y axis, so that the three charts' seconds line up under each other.
          const yWidth = (scale) => { scale.width = 120; };
          function options(yTitle, labels) {
            return { animation: false, responsive: true, maintainAspectRatio: false, parsing: false,
              interaction: { mode: "nearest", axis: "x", intersect: false },
              scales: { x: seconds, y: { beginAtZero: true, title: { display: true, text: yTitle }, afterFit: yWidth } },
              plugins: { faultWindows: { labels }, legend: { position: "top", align: "end" } } };
          }
          const middle = (bucket) => (bucket.startMs + data.bucketMs / 2) / 1000;
          const perSecond = 1000 / data.bucketMs;
          // A bucket without an answer is a gap in the latency lines (null), not a line drawn across it.
          const points = (value) => data.timeline.map((b) => ({ x: middle(b), y: value(b) }));
          const line = (label, color, values) => ({ label, data: values, borderColor: color, backgroundColor: color,
            borderWidth: 1.5, pointRadius: 0, spanGaps: false });

          const charts = [];
          // Logarithmic: a p99 of hundreds of milliseconds during a fault would flatten a p50 of one or two.
          const latency = options("ms (log scale)", true);
          // Up to the next power of ten above the slowest bucket: Chart.js's own limit can cut the highest p99 off.
          const slowest = Math.max(1, ...data.timeline.map((b) => b.p99 ?? 0));
          latency.scales.y = { type: "logarithmic", max: Math.pow(10, Math.ceil(Math.log10(slowest * 1.2))),
            title: { display: true, text: "ms (log scale)" }, afterFit: yWidth };
          charts.push(new Chart(document.getElementById("latency"), {
            type: "line",
            data: { datasets: [line("p50", "#2563eb", points((b) => b.p50)), line("p99", "#dc2626", points((b) => b.p99))] },
            options: latency, plugins: [faultWindows],
          }));
          charts.push(new Chart(document.getElementById("throughput"), {
            type: "line",
            data: { datasets: [
              line("answered /s", "#059669", points((b) => b.ok * perSecond)),
              line("failed (typed) /s", "#d97706", points((b) => b.fail * perSecond)),
              line("lost /s", "#7c3aed", points((b) => b.info * perSecond)),
            ] },
            options: options("requests / s", false), plugins: [faultWindows],
          }));

          const names = data.plugins.map((lane) => lane.name);
          const shown = (span) => span.verdict || span.state;
          const kinds = [...new Set(data.plugins.flatMap((lane) => lane.spans.map(shown)))];
          const lanes = options("", false);
          lanes.indexAxis = "y";
          lanes.parsing = true;
          lanes.interaction = { mode: "nearest", intersect: true };
          lanes.scales = { x: seconds, y: { type: "category", labels: names, afterFit: yWidth } };
          lanes.plugins.tooltip = { callbacks: { label: (item) => {
            const span = item.raw.span;
            return `${shown(span)} ${(span.fromMs / 1000).toFixed(2)}–${(span.toMs / 1000).toFixed(2)} s` +
              (span.reason ? `: ${span.reason}` : "");
          } } };
          charts.push(new Chart(document.getElementById("plugins"), {
            type: "bar",
            data: { datasets: kinds.map((kind) => ({
              label: kind, backgroundColor: states[kind] || "#6b7280", grouped: false, barPercentage: 0.9,
              categoryPercentage: 0.9,
              data: data.plugins.flatMap((lane) => lane.spans.filter((span) => shown(span) === kind)
                .map((span) => ({ x: [span.fromMs / 1000, span.toMs / 1000], y: lane.name, span }))),
            })) },
            options: lanes, plugins: [faultWindows, restartMarks],
          }));
          window.chaosReport = { data, charts, drawn };
        })();
        """#
}
