// The dashboard page's inline style sheet and script (dashboard_page.cpp embeds both). The script
// only filters: it reads the filter box (pre-filled from "?q=" or "#q=" in the URL), hides rows,
// charts and groups whose text lacks a word of it, and never writes text from the page as HTML.
// It marks the body data-ready="1" once it ran and data-js-error on an uncaught error, so a
// headless browser can tell from the DOM alone that it ran cleanly.
#pragma once

namespace accel::reports::dashboard_assets {

inline constexpr const char* kStyle =
    R"(body{font-family:"DejaVu Sans",Arial,sans-serif;margin:0 auto;padding:16px 24px;max-width:1320px;color:#1a1a1a}
h1{font-size:22px;margin:4px 0 6px}h2{font-size:18px;margin:22px 0 6px}h3{font-size:15px;margin:0 0 6px}
[hidden]{display:none!important}figure,section{scroll-margin-top:110px}a{color:#0b57a4}code{font-size:12px}
header{position:sticky;top:0;background:#fff;border-bottom:1px solid #ddd;padding:6px 0 8px;z-index:2}
#summary{margin:4px 0;font-size:14px}.filter{display:flex;gap:10px;align-items:center;font-size:13px}
.filter input{width:30em;padding:4px 6px;font-size:14px;border:1px solid #999;border-radius:3px}
table{border-collapse:collapse;margin:6px 0 10px}td,th{border:1px solid #d4d4d4;padding:3px 8px;font-size:13px;text-align:left;vertical-align:top}
th{background:#f2f2f2}td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.badge{padding:1px 6px;border-radius:3px;font-size:12px;white-space:nowrap}
.regressed{background:#fde0e0;color:#a00000;font-weight:bold}.improved{background:#e0f5e6;color:#0a6b2a}
.ok{background:#eef2f7}.few{background:#fff4d6}.single{background:#f2f2f2;color:#666}
tr.regressed-row td{background:#fff3f3}
.group{border:1px solid #ddd;border-radius:4px;padding:10px 12px;margin:12px 0}
.group.has-regression{border-color:#d62728;border-width:2px}
.counts{font-weight:normal;font-size:13px;color:#555}
.charts{display:flex;flex-wrap:wrap;gap:8px}.charts figure{margin:0;border:1px solid #eee}
.charts svg{max-width:100%;height:auto;display:block}figure:target{outline:3px solid #0b57a4}
p.note,details{font-size:12px;color:#555;max-width:80em;margin:4px 0}
#all-clear{background:#e0f5e6;color:#0a6b2a;padding:6px 10px;border-radius:3px;display:inline-block}
)";

inline constexpr const char* kScript = R"((function () {
  var body = document.body;
  window.onerror = function (message) {
    body.setAttribute('data-js-error', String(message));
  };
  var box = document.getElementById('filter');
  var count = document.getElementById('filter-count');
  var items = Array.prototype.slice.call(document.querySelectorAll('[data-filter]'));
  var groups = Array.prototype.slice.call(document.querySelectorAll('section.group'));
  var total = document.querySelectorAll('tr.case-row').length;
  function apply() {
    var words = box.value.toLowerCase().split(/\s+/).filter(Boolean);
    items.forEach(function (e) {
      var text = e.getAttribute('data-filter');
      e.hidden = !words.every(function (w) { return text.indexOf(w) >= 0; });
    });
    groups.forEach(function (g) {
      g.hidden = !g.querySelector('tr.case-row:not([hidden])');
    });
    var shown = document.querySelectorAll('tr.case-row:not([hidden])').length;
    count.textContent = shown + ' of ' + total + ' cases shown';
    body.setAttribute('data-shown', String(shown));
  }
  function fromUrl() {
    var m = /[?#&]q=([^&#]*)/.exec(location.search + location.hash);
    if (!m) return;
    var text = m[1].replace(/\+/g, ' ');
    try {
      box.value = decodeURIComponent(text);
    } catch (e) {  // a malformed %-escape: take the text as typed
      box.value = text;
    }
  }
  box.addEventListener('input', apply);
  window.addEventListener('hashchange', function () { fromUrl(); apply(); });
  fromUrl();
  apply();
  body.setAttribute('data-ready', '1');
})();
)";

}  // namespace accel::reports::dashboard_assets
