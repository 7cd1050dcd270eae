document.addEventListener("click", function (e) {
  var b = e.target.closest ? e.target.closest("button.copy") : null;
  if (!b) return;
  var code = b.parentNode.querySelector("code");
  var text = code ? code.textContent : "";
  var done = function () {
    var was = b.textContent;
    b.textContent = b.getAttribute("data-done") || was;
    setTimeout(function () { b.textContent = was; }, 1500);
  };
  var select = function () {
    var r = document.createRange();
    r.selectNodeContents(code);
    var s = window.getSelection();
    s.removeAllRanges();
    s.addRange(r);
    try { if (document.execCommand("copy")) done(); } catch (err) {}
  };
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(text).then(done, select);
  } else {
    select();
  }
});
document.documentElement.setAttribute("data-js", "ready");
