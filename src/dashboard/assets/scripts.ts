/**
 * The dashboard's only scripts, inlined with the page's CSP nonce. Both are
 * enhancements: without them the key is still selectable text and the jobs
 * page still shows the current state on reload.
 */

/** Copies the text of the element named by the button's data-copy attribute. */
export const COPY_SCRIPT = `
document.querySelectorAll("button[data-copy]").forEach(function (button) {
  button.hidden = false;
  button.addEventListener("click", function () {
    var source = document.getElementById(button.getAttribute("data-copy"));
    var status = document.getElementById(button.getAttribute("aria-describedby"));
    navigator.clipboard.writeText(source.textContent.trim()).then(
      function () { status.textContent = "Copied to the clipboard."; },
      function () { status.textContent = "Copy failed: select the key and copy it by hand."; }
    );
  });
});
`;

/**
 * Polls the active job's JSON status and moves its progress bar; once the job
 * has finished, swaps in the server-rendered card (clips, failure reason).
 */
export const PROGRESS_SCRIPT = `
document.querySelectorAll("[data-live-job]").forEach(function (card) {
  var id = card.getAttribute("data-live-job");
  var bar = card.querySelector("progress");
  var step = card.querySelector("[data-step]");
  var status = card.querySelector("[data-status]");
  function finish() {
    fetch("/dashboard/jobs/" + id + "/card", { credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
      .then(function (html) {
        var holder = document.createElement("div");
        holder.innerHTML = html;
        var fresh = holder.firstElementChild;
        card.replaceWith(fresh);
        var heading = fresh.querySelector("h3");
        if (heading) { heading.setAttribute("tabindex", "-1"); }
      }, function () { window.location.reload(); });
  }
  function poll() {
    fetch("/dashboard/jobs/" + id + "/status.json", { credentials: "same-origin", cache: "no-store" })
      .then(function (r) { return r.ok ? r.json() : Promise.reject(r.status); })
      .then(function (job) {
        if (job.status === "queued" || job.status === "processing") {
          bar.value = job.progress;
          bar.textContent = job.progress + "%";
          step.textContent = job.step + " (" + job.progress + "%)";
          status.textContent = job.status;
          status.className = "status status-" + job.status;
          setTimeout(poll, 1000);
        } else {
          finish();
        }
      }, function () { setTimeout(poll, 5000); });
  }
  setTimeout(poll, 500);
});
`;
