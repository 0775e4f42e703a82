// tracelens report: tooltips and timeline zoom. No network, no external code.
(function () {
  "use strict";
  var tip = document.getElementById("tip");
  function showTip(text, ev) {
    tip.textContent = text;
    tip.hidden = false;
    var x = ev.clientX + 14, y = ev.clientY + 14;
    var r = tip.getBoundingClientRect();
    if (x + r.width > window.innerWidth - 8) x = Math.max(8, ev.clientX - r.width - 14);
    if (y + r.height > window.innerHeight - 8) y = Math.max(8, ev.clientY - r.height - 14);
    tip.style.left = x + "px";
    tip.style.top = y + "px";
  }
  document.addEventListener("mousemove", function (ev) {
    var el = ev.target && ev.target.closest ? ev.target.closest("[data-tip]") : null;
    if (el) showTip(el.getAttribute("data-tip"), ev); else tip.hidden = true;
  });
  document.addEventListener("mouseleave", function () { tip.hidden = true; });

  function fmtNs(ns) {
    var a = Math.abs(ns), units = [["s", 1e9], ["ms", 1e6], ["µs", 1e3]];
    for (var i = 0; i < units.length; i++) {
      if (a >= units[i][1]) {
        var v = ns / units[i][1];
        return (Math.abs(v) < 100 ? v.toFixed(2) : v.toFixed(1)) + " " + units[i][0];
      }
    }
    return Math.round(ns) + " ns";
  }
  function niceStep(span) {
    var raw = span / 8;
    if (raw <= 0) return 1;
    var mag = Math.pow(10, Math.floor(Math.log10(raw)));
    var ms = [1, 2, 2.5, 5, 10];
    for (var i = 0; i < ms.length; i++) if (raw <= ms[i] * mag) return ms[i] * mag;
    return 10 * mag;
  }
  var SVGNS = "http://www.w3.org/2000/svg";

  function Zoom(svg) {
    var t0 = parseFloat(svg.getAttribute("data-t0")), t1 = parseFloat(svg.getAttribute("data-t1"));
    var x0 = parseFloat(svg.getAttribute("data-x0")), w = parseFloat(svg.getAttribute("data-w"));
    var rel = svg.getAttribute("data-rel") === "1";
    var data = svg.querySelector(".tl-data"), axis = svg.querySelector(".tl-axis");
    var labels = Array.prototype.slice.call(svg.querySelectorAll(".tl-label"));
    var height = parseFloat(svg.getAttribute("height"));
    var k = 1, tx = 0, self = this;
    function clamp() {
      k = Math.max(1, Math.min(k, 1e6));
      tx = Math.min(0, Math.max(tx, w * (1 - k)));
    }
    function toSvgX(clientX) {
      var r = svg.getBoundingClientRect();
      return (clientX - r.left) * (parseFloat(svg.getAttribute("width")) / r.width);
    }
    function drawAxis() {
      while (axis.firstChild) axis.removeChild(axis.firstChild);
      var span = (t1 - t0) / k, left = t0 + (-tx / w) * (t1 - t0) / k, right = left + span;
      var step = niceStep(span), first = Math.ceil((rel ? left - t0 : left) / step) * step;
      for (var i = 0; i < 60; i++) {
        var tv = first + i * step, abs = rel ? t0 + tv : tv;
        if (abs > right + 1e-6) break;
        var x = x0 + (abs - left) / span * w;
        var line = document.createElementNS(SVGNS, "line");
        line.setAttribute("x1", x); line.setAttribute("x2", x);
        line.setAttribute("y1", 16); line.setAttribute("y2", height);
        line.setAttribute("stroke", "#e5e7eb");
        var text = document.createElementNS(SVGNS, "text");
        text.setAttribute("x", x + 3); text.setAttribute("y", 13);
        text.setAttribute("fill", "#6b7280"); text.setAttribute("font-size", "9.5");
        text.textContent = rel ? (Math.abs(tv) < 1e-9 ? "0" : "+" + fmtNs(tv)) : fmtNs(tv);
        axis.appendChild(line); axis.appendChild(text);
      }
    }
    function apply() {
      clamp();
      data.setAttribute("transform", "translate(" + (x0 - x0 * k + tx) + ",0) scale(" + k + ",1)");
      labels.forEach(function (el) {
        var lx = parseFloat(el.getAttribute("data-x")), lw = parseFloat(el.getAttribute("data-w"));
        var nx = x0 + (lx - x0) * k + tx;
        var vis = lw * k > 30 && nx + lw * k > x0 && nx < x0 + w;
        el.setAttribute("x", Math.max(nx, x0) + 3);
        el.style.display = vis ? "" : "none";
      });
      drawAxis();
    }
    this.zoomAt = function (factor, sx) {
      var px = (sx === undefined ? x0 + w / 2 : sx) - x0;
      var nk = Math.max(1, Math.min(k * factor, 1e6));
      tx = px - (px - tx) * (nk / k);
      k = nk;
      apply();
    };
    this.reset = function () { k = 1; tx = 0; apply(); };
    svg.addEventListener("wheel", function (ev) {
      if (!(ev.ctrlKey || ev.metaKey || ev.shiftKey)) return;
      ev.preventDefault();
      self.zoomAt(ev.deltaY < 0 ? 1.25 : 0.8, toSvgX(ev.clientX));
    }, { passive: false });
    svg.addEventListener("dblclick", function (ev) {
      self.zoomAt(ev.shiftKey ? 0.5 : 2, toSvgX(ev.clientX));
    });
    var drag = null;
    svg.addEventListener("mousedown", function (ev) {
      drag = { x: toSvgX(ev.clientX), tx: tx };
      svg.classList.add("dragging");
      ev.preventDefault();
    });
    window.addEventListener("mousemove", function (ev) {
      if (!drag) return;
      tx = drag.tx + (toSvgX(ev.clientX) - drag.x);
      apply();
    });
    window.addEventListener("mouseup", function () { drag = null; svg.classList.remove("dragging"); });
  }

  var zooms = {};
  document.querySelectorAll("svg.tl-zoom").forEach(function (svg, i) {
    var id = svg.getAttribute("id") || "tl" + i;
    zooms[id] = new Zoom(svg);
  });
  document.querySelectorAll("[data-zoom]").forEach(function (btn) {
    btn.addEventListener("click", function () {
      var z = zooms[btn.getAttribute("data-target")];
      if (!z) return;
      var what = btn.getAttribute("data-zoom");
      if (what === "in") z.zoomAt(2); else if (what === "out") z.zoomAt(0.5); else z.reset();
    });
  });
  document.documentElement.setAttribute("data-ready", "1");
})();
