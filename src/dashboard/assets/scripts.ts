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
  // Each read is held up to a second for the job's end (Prefer: wait=1), and the next is sent as soon as it is
  // answered: the end shows as it commits. A read answered at once (not held) is followed a second later.
  function poll() {
    var sent = Date.now();
    fetch("/dashboard/jobs/" + id + "/status.json", { credentials: "same-origin", cache: "no-store", headers: { Prefer: "wait=1" } })
      .then(function (r) { return r.ok ? r.json() : Promise.reject(r.status); })
      .then(function (job) {
        if (job.status === "queued" || job.status === "processing") {
          bar.value = job.progress;
          bar.textContent = job.progress + "%";
          step.textContent = job.step + " (" + job.progress + "%)";
          status.textContent = job.status;
          status.className = "status status-" + job.status;
          setTimeout(poll, Math.max(0, 1000 - (Date.now() - sent)));
        } else {
          finish();
        }
      }, function () { setTimeout(poll, 5000); });
  }
  poll();
});
`;

/**
 * Drag-and-drop (or chosen) file upload on the jobs page: speaks tus to
 * /dashboard/uploads (the session authenticates it; writes carry the CSRF
 * token in X-CSRF-Token), in 20 MiB PATCHes with a progress bar, resuming
 * from the server's offset (HEAD) after a failed piece. When done, the
 * form's hidden upload_id is set and the video URL is no longer required.
 */
export const UPLOAD_SCRIPT = `
document.querySelectorAll("[data-upload-zone]").forEach(function (zone) {
  var form = zone.closest("form");
  var input = zone.querySelector("input[type=file]");
  var bar = zone.querySelector("progress");
  var status = zone.querySelector("[data-upload-status]");
  var uploadId = form.querySelector("input[name=upload_id]");
  var videoUrl = form.querySelector("input[name=video_url]");
  var submit = form.querySelector("button[type=submit]");
  var endpoint = zone.getAttribute("data-endpoint");
  var csrf = zone.getAttribute("data-csrf");
  var CHUNK = 20 * 1024 * 1024;
  zone.hidden = false;
  function b64(text) { return btoa(unescape(encodeURIComponent(text))); }
  function send(method, path, headers, body, onProgress) {
    return new Promise(function (resolve, reject) {
      var xhr = new XMLHttpRequest();
      xhr.open(method, path);
      xhr.setRequestHeader("Tus-Resumable", "1.0.0");
      xhr.setRequestHeader("X-CSRF-Token", csrf);
      Object.keys(headers).forEach(function (name) { xhr.setRequestHeader(name, headers[name]); });
      if (onProgress) xhr.upload.onprogress = function (event) { onProgress(event.loaded); };
      xhr.onload = function () { resolve(xhr); };
      xhr.onerror = function () { reject(new Error("the connection failed")); };
      xhr.send(body === undefined ? null : body);
    });
  }
  function detail(xhr) {
    try { return JSON.parse(xhr.responseText).detail; } catch (e) { return "HTTP " + xhr.status; }
  }
  function upload(file) {
    var location = "";
    var failures = 0;
    uploadId.value = "";
    submit.disabled = true;
    bar.hidden = false;
    function show(offset) {
      var percent = Math.floor((offset * 100) / file.size);
      bar.value = percent;
      bar.textContent = percent + "%";
      status.textContent = "Uploading " + file.name + ": " + percent + "%";
    }
    function from(offset) {
      show(offset);
      if (offset >= file.size) return finished();
      var end = Math.min(offset + CHUNK, file.size);
      return send("PATCH", location, { "Upload-Offset": String(offset), "Content-Type": "application/offset+octet-stream" },
        file.slice(offset, end), function (loaded) { show(offset + loaded); })
        .then(function (xhr) {
          if (xhr.status === 204) { failures = 0; return from(Number(xhr.getResponseHeader("Upload-Offset"))); }
          if (xhr.status === 409 || xhr.status >= 500) return resume();
          throw new Error(detail(xhr));
        }, resume);
    }
    function resume() {
      failures += 1;
      if (failures > 5) return Promise.reject(new Error("the connection keeps failing; try again later"));
      return new Promise(function (wait) { setTimeout(wait, 1000 * failures); })
        .then(function () { return send("HEAD", location, {}); })
        .then(function (xhr) {
          if (xhr.status !== 200) throw new Error("HTTP " + xhr.status);
          return from(Number(xhr.getResponseHeader("Upload-Offset")));
        }, resume);
    }
    function finished() {
      uploadId.value = location.split("/").pop();
      videoUrl.required = false;
      videoUrl.value = "";
      submit.disabled = false;
      status.textContent = "Uploaded " + file.name + ". Choose the video type and submit.";
    }
    status.textContent = "Uploading " + file.name + "...";
    send("POST", endpoint, {
      "Upload-Length": String(file.size),
      "Upload-Metadata": "filename " + b64(file.name) + ",filetype " + b64(file.type || "application/octet-stream"),
    })
      .then(function (xhr) {
        if (xhr.status !== 201) throw new Error(detail(xhr));
        location = xhr.getResponseHeader("Location");
        return from(0);
      })
      .catch(function (err) {
        status.textContent = "Upload failed: " + err.message;
        bar.hidden = true;
        submit.disabled = false;
      });
  }
  input.addEventListener("change", function () { if (input.files.length > 0) upload(input.files[0]); });
  zone.addEventListener("dragover", function (event) { event.preventDefault(); zone.classList.add("dragging"); });
  zone.addEventListener("dragleave", function () { zone.classList.remove("dragging"); });
  zone.addEventListener("drop", function (event) {
    event.preventDefault();
    zone.classList.remove("dragging");
    if (event.dataTransfer.files.length > 0) upload(event.dataTransfer.files[0]);
  });
});
`;

/**
 * The clip page: shows the span's nudge buttons (each moves its edge by its
 * data-by seconds, never below 0), and while a re-render is queued or
 * running, reloads the page every two seconds until it has ended (the new
 * version, or the failure, is then on the page).
 */
export const CLIP_EDIT_SCRIPT = `
document.querySelectorAll("button[data-nudge]").forEach(function (button) {
  var input = document.getElementById(button.getAttribute("data-nudge"));
  var by = Number(button.getAttribute("data-by"));
  button.hidden = false;
  button.addEventListener("click", function () {
    var value = Math.max(0, Math.round((Number(input.value) + by) * 1000) / 1000);
    input.value = String(value);
    input.dispatchEvent(new Event("change"));
  });
});
if (document.querySelector("[data-edit-pending]")) {
  setTimeout(function () { window.location.reload(); }, 2000);
}
`;
