/* jobwire admin panel: draws line charts with uPlot (global `uPlot`, from
 * uPlot.iife.min.js) into
 *
 *   <div class="chart" data-series='{"x":[unix seconds...],
 *        "series":[{"label":"...","values":[...]}]}'>no-JS fallback</div>
 *
 * The chart fills the container's width and is redrawn when that changes.
 * A series with "axis":"right" is scaled on an axis of its own, on the right
 * (another unit: latency next to a share, spend next to tokens).
 * Optional: data-height="240" (plot height in px). The div's contents are a
 * no-JS fallback and are replaced by the chart; if uPlot is missing or the
 * JSON is bad they stay. Charts in content that htmx swaps in are drawn too.
 * A <details id="…"> that is open stays open when htmx swaps in its new copy.
 * Nothing else lives here: pages must work without this file.
 */
(function () {
  "use strict";

  var PALETTE = ["#2563eb", "#d97706", "#059669", "#dc2626", "#7c3aed", "#0891b2", "#db2777", "#65a30d"];
  var DEFAULT_HEIGHT = 220;
  var charts = []; // {el, plot, ro}

  function cssVar(name, fallback) {
    var v = getComputedStyle(document.documentElement).getPropertyValue(name);
    return (v && v.trim()) || fallback;
  }

  function innerWidth(el) {
    var cs = getComputedStyle(el);
    var w = el.clientWidth - parseFloat(cs.paddingLeft || 0) - parseFloat(cs.paddingRight || 0);
    return Math.max(120, Math.floor(w));
  }

  function plotHeight(el) {
    var h = parseInt(el.getAttribute("data-height"), 10);
    return h > 40 ? h : DEFAULT_HEIGHT;
  }

  function parse(el) {
    var spec;
    try {
      spec = JSON.parse(el.getAttribute("data-series"));
    } catch (e) {
      console.warn("panel.js: bad data-series JSON", el, e);
      return null;
    }
    if (!spec || !Array.isArray(spec.x) || !Array.isArray(spec.series)) {
      console.warn("panel.js: data-series needs {x:[], series:[]}", el);
      return null;
    }
    var n = spec.x.length;
    var data = [spec.x];
    var series = [{}];
    var right = false;
    spec.series.forEach(function (s, i) {
      var vals = Array.isArray(s.values) ? s.values.slice(0, n) : [];
      while (vals.length < n) vals.push(null);
      data.push(vals);
      var color = PALETTE[i % PALETTE.length];
      var onRight = s.axis === "right";
      right = right || onRight;
      series.push({
        label: String(s.label == null ? "series " + (i + 1) : s.label),
        stroke: color,
        width: 2,
        scale: onRight ? "r" : "y",
        points: { show: n < 60 },
        spanGaps: false
      });
    });
    return { data: data, series: series, right: right };
  }

  function draw(el) {
    var parsed = parse(el);
    if (!parsed) return;
    var text = cssVar("--muted", "#5f6b7a");
    var grid = cssVar("--border", "#d8dde3");
    var axis = { stroke: text, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } };
    var opts = {
      width: innerWidth(el),
      height: plotHeight(el),
      series: parsed.series,
      scales: { x: { time: true } },
      axes: [Object.assign({}, axis), Object.assign({ size: 55, scale: "y" }, axis)],
      legend: { show: true },
      cursor: { drag: { x: true, y: false } }
    };
    if (parsed.right) {
      opts.axes.push(Object.assign({}, axis, { size: 55, scale: "r", side: 1, grid: { show: false } }));
    }
    el.textContent = "";
    var plot = new uPlot(opts, parsed.data, el);
    var entry = { el: el, plot: plot, ro: null, w: opts.width };
    if (typeof ResizeObserver === "function") {
      entry.ro = new ResizeObserver(function () { resize(entry); });
      entry.ro.observe(el);
    }
    charts.push(entry);
  }

  function resize(entry) {
    if (!entry.el.isConnected) return;
    var w = innerWidth(entry.el);
    if (w === entry.w) return; // the legend changing height must not loop
    entry.w = w;
    entry.plot.setSize({ width: w, height: plotHeight(entry.el) });
  }

  // Forget charts whose element htmx (or anything else) removed.
  function prune() {
    charts = charts.filter(function (c) {
      if (c.el.isConnected) return true;
      if (c.ro) c.ro.disconnect();
      c.plot.destroy();
      return false;
    });
  }

  function init(root) {
    if (typeof uPlot !== "function") return;
    prune();
    var scope = root && root.querySelectorAll ? root : document;
    var els = Array.prototype.slice.call(scope.querySelectorAll("div.chart[data-series]"));
    if (scope.matches && scope.matches("div.chart[data-series]")) els.unshift(scope);
    els.forEach(function (el) {
      if (charts.some(function (c) { return c.el === el; })) return;
      draw(el);
    });
  }

  // Redraw everything (theme change): colours are read when drawing.
  function redrawAll() {
    charts.forEach(function (c) {
      if (c.ro) c.ro.disconnect();
      c.plot.destroy();
    });
    var els = charts.map(function (c) { return c.el; });
    charts = [];
    els.forEach(function (el) { if (el.isConnected) draw(el); });
  }

  if (typeof ResizeObserver !== "function") {
    var t = null;
    window.addEventListener("resize", function () {
      clearTimeout(t);
      t = setTimeout(function () { charts.forEach(resize); }, 100);
    });
  }

  if (window.matchMedia) {
    var mq = window.matchMedia("(prefers-color-scheme: dark)");
    if (mq.addEventListener) mq.addEventListener("change", redrawAll);
  }

  // htmx fires htmx:load for new content it swaps in.
  document.addEventListener("htmx:load", function (ev) { init(ev.target); });

  // Open <details id="…"> stay open across a swap of their container.
  var openDetails = [];
  document.addEventListener("htmx:beforeSwap", function (ev) {
    var target = ev.detail && ev.detail.target;
    openDetails = [];
    if (!target || !target.querySelectorAll) return;
    Array.prototype.forEach.call(target.querySelectorAll("details[id][open]"), function (d) {
      openDetails.push(d.id);
    });
  });
  document.addEventListener("htmx:afterSwap", function () {
    openDetails.forEach(function (id) {
      var d = document.getElementById(id);
      if (d && d.tagName === "DETAILS") d.open = true;
    });
    openDetails = [];
  });

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", function () { init(document); });
  } else {
    init(document);
  }
})();
