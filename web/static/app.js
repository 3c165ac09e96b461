// Small progressive enhancements; every page works without them.

// Styles that need these scripts (a selection bar that opens on demand)
// apply under .js only.
document.documentElement.classList.add("js");

// Forms with data-confirm ask before submitting (e.g. deletions).
document.addEventListener("submit", (ev) => {
  const form = ev.target;
  if (form instanceof HTMLFormElement && form.dataset.confirm && !window.confirm(form.dataset.confirm)) {
    ev.preventDefault();
  }
});

// Forms with data-action (e.g. "Trigger now") post in the background and
// show the server's confirmation, or its error, in their [data-action-result]
// element. Without JavaScript they post normally and the page they return to
// shows the same notice.
document.addEventListener("submit", async (ev) => {
  const form = ev.target;
  if (!(form instanceof HTMLFormElement) || !("action" in form.dataset) || ev.defaultPrevented) return;
  ev.preventDefault();
  const out = form.querySelector("[data-action-result]");
  const btn = form.querySelector("button[type=submit]");
  const url = new URL(form.action);
  url.searchParams.delete("from"); // from=page asks for a redirect; we want JSON
  const body = new URLSearchParams(new FormData(form));
  body.delete("from");
  body.delete("back");
  if (btn) btn.disabled = true;
  try {
    const res = await fetch(url, { method: "POST", body, headers: { Accept: "application/json" } });
    let data = {};
    try { data = await res.json(); } catch { /* not JSON */ }
    if (out) {
      out.classList.toggle("bad", !res.ok);
      out.classList.toggle("muted", res.ok);
      out.textContent = res.ok ? (data.message || "Done.") : ((data.error && data.error.message) || `Failed (${res.status}).`);
    }
    if (res.ok) form.dispatchEvent(new CustomEvent("action-done", { bubbles: true, detail: data }));
  } catch {
    if (out) { out.classList.replace("muted", "bad"); out.textContent = "The request did not reach the server."; }
  } finally {
    if (btn) btn.disabled = false;
  }
});

// Buttons with data-copy copy their value to the clipboard.
document.addEventListener("click", async (ev) => {
  const btn = ev.target instanceof Element ? ev.target.closest("[data-copy]") : null;
  if (!btn) return;
  try {
    await navigator.clipboard.writeText(btn.dataset.copy);
    const old = btn.textContent;
    btn.textContent = "Copied";
    setTimeout(() => { btn.textContent = old; }, 1500);
  } catch {
    window.prompt("Copy this link:", btn.dataset.copy);
  }
});

// The notifications bell (administrators): its unread badge refreshes every
// 30 seconds; a click opens a list of the newest notifications with their
// actions (mark read, dismiss, repair, mark all read, clear all). Without
// JavaScript the bell is a link to the notifications page.
const bellLink = document.querySelector("[data-bell]");
const bell = document.querySelector("[data-bell-count]");
if (bellLink && bell) {
  const box = document.createElement("div");
  box.className = "bell-list";
  box.hidden = true;
  box.setAttribute("role", "dialog");
  box.setAttribute("aria-label", "Notifications");
  bellLink.after(box);
  const post = (url, body) => fetch(url, {
    method: "POST",
    headers: { Accept: "application/json", "Content-Type": "application/json" },
    body: body ? JSON.stringify(body) : "{}",
  });
  const button = (label, onClick, cls) => {
    const b = document.createElement("button");
    b.type = "button";
    b.className = cls || "link";
    b.textContent = label;
    b.addEventListener("click", onClick);
    return b;
  };
  const render = (body) => {
    bell.textContent = String(body.unread);
    bell.hidden = body.unread === 0;
    box.replaceChildren();
    const head = document.createElement("div");
    head.className = "row";
    head.append(
      button("Mark all read", async () => { await post("/api/notifications/read-all"); refresh(); }),
      button("Clear all", async () => {
        if (window.confirm("Clear every notification?")) { await post("/api/notifications/clear"); refresh(); }
      }),
    );
    const all = document.createElement("a");
    all.href = "/notifications";
    all.textContent = "All notifications";
    head.append(all);
    box.append(head);
    const list = document.createElement("ul");
    list.className = "notes";
    for (const n of body.items.slice(0, 10)) {
      const li = document.createElement("li");
      li.className = `note sev-${n.severity}${n.is_read ? "" : " unread"}`;
      li.dataset.notification = String(n.id);
      const title = document.createElement("strong");
      title.textContent = n.title; // textContent: titles carry file names
      const msg = document.createElement("div");
      msg.textContent = n.message;
      const actions = document.createElement("div");
      actions.className = "row";
      if (n.package_id) {
        const a = document.createElement("a");
        a.href = `/packages/${n.package_id}`;
        a.textContent = "Open package";
        actions.append(a);
      }
      for (const l of n.links || []) { // the groups of a conflict
        const a = document.createElement("a");
        a.href = l.href;
        a.textContent = l.label; // textContent: labels carry group names
        actions.append(a);
      }
      if (n.repairable) {
        actions.append(button("Repair", async (ev) => {
          if (!window.confirm("Download and publish this package again?")) return;
          const res = await post("/api/notifications/repair", { notification_id: n.id });
          const out = await res.json().catch(() => ({}));
          ev.target.replaceWith(Object.assign(document.createElement("span"), {
            className: "muted", textContent: res.ok ? "Repair queued" : (out.error && out.error.message) || "Repair failed",
          }));
        }));
      }
      if (!n.is_read) {
        actions.append(button("Mark read", async () => { await post(`/api/notifications/${n.id}/read`); refresh(); }));
      }
      actions.append(button("Dismiss", async () => { await post(`/api/notifications/${n.id}/dismiss`); refresh(); }));
      li.append(title, msg, actions);
      list.append(li);
    }
    if (body.items.length === 0) {
      const li = document.createElement("li");
      li.className = "muted";
      li.textContent = "No notifications.";
      list.append(li);
    }
    box.append(list);
  };
  const refresh = async () => {
    try {
      const res = await fetch("/api/notifications", { headers: { Accept: "application/json" } });
      if (!res.ok) return;
      render(await res.json());
    } catch { /* offline: keep the last state */ }
  };
  bellLink.addEventListener("click", (ev) => {
    ev.preventDefault();
    box.hidden = !box.hidden;
    if (!box.hidden) refresh();
  });
  document.addEventListener("keydown", (ev) => { if (ev.key === "Escape") box.hidden = true; });
  setInterval(refresh, 30000);
}

// The worker status panel polls /api/ingestion/status: every 2 s while a
// cycle runs, every 10 s otherwise, and counts down to the next cycle.
const panel = document.querySelector("[data-worker-panel]");
if (panel) {
  const $ = (sel) => panel.querySelector(sel);
  let nextAt = null;
  let timer = null;
  const tick = () => {
    if (!nextAt) { $("[data-worker-next]").textContent = "—"; return; }
    const s = Math.max(0, Math.round((nextAt - Date.now()) / 1000));
    $("[data-worker-next]").textContent = s > 0 ? `in ${Math.floor(s / 60)} min ${s % 60} s` : "due now";
  };
  // Every forum topic in progress, each with its own skip button naming
  // it; the list is rebuilt only when it changes (not under a click).
  let shownTopics = "";
  const showTopics = (topics) => {
    const key = JSON.stringify(topics);
    if (key === shownTopics) return;
    shownTopics = key;
    const list = $("[data-worker-topics]");
    list.replaceChildren(...topics.map((t) => {
      const li = document.createElement("li");
      const form = document.createElement("form");
      form.method = "post";
      form.action = "/api/ingestion/disable-active-topic";
      form.className = "inline";
      const name = `“${t.topic || "topic " + t.topic_id}” (${t.channel})`;
      form.dataset.confirm = `Skip the rest of ${name} and stop fetching it?`;
      for (const [k, v] of [["from", "page"], ["account_channel_map_id", t.account_channel_map_id], ["topic_id", t.topic_id]]) {
        const input = document.createElement("input");
        input.type = "hidden"; input.name = k; input.value = v;
        form.append(input);
      }
      const button = document.createElement("button");
      button.type = "submit"; button.className = "link danger";
      button.textContent = `Skip and disable ${name}`;
      form.append(button);
      li.append(`In progress: ${name} `, form);
      return li;
    }));
  };
  // Sizes and durations as the panel shows them: 1.5 GiB, 35 MiB/s, 2 min 5 s.
  const size = (n) => {
    const units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let i = 0;
    while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
    return `${i === 0 ? n : n.toFixed(n < 10 ? 1 : 0)} ${units[i]}`;
  };
  const duration = (s) => s >= 3600 ? `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`
    : s >= 60 ? `${Math.floor(s / 60)} min ${s % 60} s` : `${s} s`;
  const phaseText = (f) => (f.phase === "uploading" || f.phase === "forwarding") && f.parts
    ? `${f.phase} part ${f.part} of ${f.parts}` : f.phase;
  // Every file in flight, one line each: its name once, the phase the
  // worker is in, and the phase's bytes, rate and time left when it has them.
  const showFiles = (files) => {
    $("[data-worker-files]").replaceChildren(...files.map((f) => {
      const li = document.createElement("li");
      li.dataset.phase = f.phase;
      const name = document.createElement("strong");
      name.textContent = f.file;
      const parts = [phaseText(f)];
      if (f.total_bytes > 0) {
        parts.push(`${size(f.bytes)} of ${size(f.total_bytes)} (${Math.floor((100 * f.bytes) / f.total_bytes)} %)`);
      }
      if (f.bytes_per_second > 0) parts.push(`${size(f.bytes_per_second)}/s`);
      if (f.seconds_left > 0) parts.push(`${duration(f.seconds_left)} left`);
      li.append(name, ` — ${parts.join(" · ")}`);
      if (f.total_bytes > 0) {
        const bar = document.createElement("progress");
        bar.max = f.total_bytes; bar.value = f.bytes;
        li.append(" ", bar);
      }
      return li;
    }));
  };
  const poll = async () => {
    let delay = 10000;
    try {
      const res = await fetch("/api/ingestion/status", { headers: { Accept: "application/json" } });
      if (res.ok) {
        const st = await res.json();
        const run = st.running;
        const bar = $("[data-worker-progress]");
        const files = st.files || [];
        showFiles(files);
        if (run && files.length > 0) {
          // The files' own lines say what happens to each.
          delay = 2000;
          $("[data-worker-state]").textContent = `Running: ${files.length} ${files.length === 1 ? "file" : "files"} in flight`;
          bar.hidden = true;
        } else if (run) {
          delay = 2000;
          const what = run.current_activity || run.current_step || "working";
          const file = run.current_file && !what.includes(run.current_file) ? " — " + run.current_file : "";
          $("[data-worker-state]").textContent = `Running: ${what}${file}`;
          bar.hidden = !(run.current_total_bytes > 0);
          bar.value = run.current_total_bytes > 0 ? (100 * run.current_bytes) / run.current_total_bytes : 0;
        } else {
          bar.hidden = true;
          $("[data-worker-state]").textContent = st.last ? `Idle. Last cycle ${st.last.status.toLowerCase()} at ${st.last.finished_at}.` : "Idle. No cycle has run yet.";
        }
        const c = run || st.last;
        $("[data-worker-counters]").textContent = c ? `${c.messages_scanned} messages scanned · found ${c.archives_found} = ` +
          `new ${c.ingested} + duplicates ${c.duplicates} + skipped ${c.skipped} + held back (settling) ${c.held_back}` +
          (run ? " so far (the rest is in progress)" : "") : "";
        showTopics(st.topics || []);
        nextAt = st.next_cycle_at ? Date.parse(st.next_cycle_at) : null;
        tick();
      }
    } catch { /* keep the last state */ }
    clearTimeout(timer);
    timer = setTimeout(poll, delay);
  };
  setInterval(tick, 1000);
  poll();
  // After "Trigger now", look again soon: the cycle starts within seconds.
  panel.addEventListener("action-done", () => { clearTimeout(timer); timer = setTimeout(poll, 1500); });
}

// The rebuild panel polls /api/rebuild/status every 2 s while a rebuild
// runs and shows its counters; the start button stays off meanwhile.
const rebuildPanel = document.querySelector("[data-rebuild-panel]");
if (rebuildPanel) {
  const $ = (sel) => rebuildPanel.querySelector(sel);
  const hasDestination = rebuildPanel.dataset.destination === "yes";
  const show = (run) => {
    const running = run && run.status === "RUNNING";
    $("[data-rebuild-state]").textContent = !run ? "No rebuild has run yet."
      : running ? `Running since ${run.started_at}.`
      : `Last rebuild ${run.status.toLowerCase()} at ${run.finished_at}.`;
    $("[data-rebuild-counters]").textContent = run
      ? `scanned ${run.messages_scanned} messages · created ${run.packages_created} · already indexed ${run.packages_existing} · skipped ${run.sets_skipped}`
      : "";
    const err = $("[data-rebuild-error]");
    err.hidden = !(run && run.error_message);
    err.textContent = (run && run.error_message) || "";
    $("[data-rebuild-start]").disabled = running || !hasDestination;
    return running;
  };
  const poll = async () => {
    let running = true;
    try {
      const res = await fetch("/api/rebuild/status", { headers: { Accept: "application/json" } });
      if (res.ok) running = show((await res.json()).run);
    } catch { /* keep the last state and try again */ }
    if (running) setTimeout(poll, 2000);
  };
  if (rebuildPanel.dataset.rebuildStatus === "RUNNING") poll();
}

// The upload form sends files with a progress bar, then opens the upload's
// status page. Without JavaScript the form posts normally.
const uploadForm = document.querySelector("form[data-upload]");
if (uploadForm) {
  uploadForm.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const bar = uploadForm.querySelector("[data-upload-progress]");
    const err = uploadForm.querySelector("[data-upload-error]");
    const xhr = new XMLHttpRequest();
    xhr.open("POST", "/api/uploads");
    xhr.setRequestHeader("Accept", "application/json");
    xhr.upload.onprogress = (e) => { if (e.lengthComputable) { bar.hidden = false; bar.value = (100 * e.loaded) / e.total; } };
    xhr.onload = () => {
      let body = {};
      try { body = JSON.parse(xhr.responseText); } catch { /* not JSON */ }
      if (xhr.status === 201) { window.location = `/uploads/${body.id}`; return; }
      err.hidden = false;
      err.textContent = (body.error && body.error.message) || `Upload failed (${xhr.status}).`;
    };
    xhr.onerror = () => { err.hidden = false; err.textContent = "The upload was interrupted."; };
    xhr.send(new FormData(uploadForm));
  });
}

// An upload's page polls its status every 2 s until it is complete.
const uploadTable = document.querySelector("[data-upload-poll]");
if (uploadTable && uploadTable.dataset.phase !== "complete") {
  const id = uploadTable.dataset.uploadPoll;
  const timer = setInterval(async () => {
    try {
      const res = await fetch(`/api/uploads/${id}`, { headers: { Accept: "application/json" } });
      if (!res.ok) return;
      const up = await res.json();
      document.querySelector("[data-upload-state]").textContent = up.phase;
      for (const f of up.files) {
        const cell = uploadTable.querySelector(`[data-file="${f.id}"] [data-file-status]`);
        if (cell) cell.textContent = f.phase + (f.error ? ` — ${f.error}` : "");
      }
      if (up.phase === "complete") { clearInterval(timer); window.location.reload(); }
    } catch { /* try again */ }
  }, 2000);
}

// The messaging page polls while the worker has work of its own there: a
// channel join request still PENDING (/api/messenger/joins), or an account
// login step (/api/messenger/accounts). Once it is done, the page reloads to
// show the outcome and the next form (code, password).
for (const [sel, url, key] of [["[data-joins-panel][data-pending]", "/api/messenger/joins", "pending"],
  ["[data-accounts-panel][data-pending]", "/api/messenger/accounts", "busy"]]) {
  if (!document.querySelector(sel)) continue;
  const timer = setInterval(async () => {
    try {
      const res = await fetch(url, { headers: { Accept: "application/json" } });
      if (!res.ok) return;
      if (!(await res.json())[key]) { clearInterval(timer); window.location.reload(); }
    } catch { /* try again */ }
  }, 2000);
}

// "Choose preview" on a package page: an image entry's form posts in the
// background and the status line polls the extraction every 1.5 s until it
// is DONE (the preview image is replaced) or FAILED (the error is shown).
// Without JavaScript the form posts and the package page it returns to
// shows the extraction's status.
const chooser = document.querySelector("[data-preview-chooser]");
if (chooser) {
  const status = chooser.querySelector("[data-extraction-status]");
  const preview = document.querySelector("[data-package-preview]");
  let timer;
  const say = (text, bad) => {
    status.textContent = text;
    status.classList.toggle("bad", bad);
    status.classList.toggle("muted", !bad);
  };
  const show = (x) => {
    switch (x.status) {
      case "PENDING": say(`Queued: extracting ${x.entry_path}…`, false); return false;
      case "RUNNING": say(`Extracting ${x.entry_path}…${x.error_message ? ` (${x.error_message})` : ""}`, false); return false;
      case "DONE": {
        say(`Preview set from ${x.entry_path}.`, false);
        if (preview && x.preview_url) {
          const img = document.createElement("img");
          img.src = x.preview_url;
          img.alt = preview.dataset.alt || "Preview";
          preview.replaceChildren(img);
        }
        return true;
      }
      default: say(`Could not use ${x.entry_path}: ${x.error_message || "the extraction failed."}`, true); return true;
    }
  };
  const poll = async (url) => {
    clearTimeout(timer);
    let done = false;
    try {
      const res = await fetch(url, { headers: { Accept: "application/json" } });
      if (res.ok) done = show((await res.json()).extraction);
      else if (res.status === 404) done = true;
    } catch { /* try again */ }
    if (!done) timer = setTimeout(() => poll(url), 1500);
  };
  chooser.addEventListener("submit", async (ev) => {
    const form = ev.target;
    if (!(form instanceof HTMLFormElement)) return;
    ev.preventDefault();
    const btn = form.querySelector("button[type=submit]");
    if (btn) btn.disabled = true;
    try {
      const res = await fetch(form.action, { method: "POST", body: new URLSearchParams(new FormData(form)), headers: { Accept: "application/json" } });
      let data = {};
      try { data = await res.json(); } catch { /* not JSON */ }
      if (!res.ok) { say((data.error && data.error.message) || `Failed (${res.status}).`, true); return; }
      if (!show(data.extraction)) poll(data.extraction.status_url);
    } catch {
      say("The request did not reach the server.", true);
    } finally {
      if (btn) btn.disabled = false;
    }
  });
  const st = status.dataset.status;
  if (status.dataset.statusUrl && (st === "PENDING" || st === "RUNNING")) poll(status.dataset.statusUrl);
}

// The selection bar of the catalog (and of creator and tag pages): how many
// packages are selected, "Select all on this page" and "Clear". Boxes a
// failed form posted are selected again (data-selection), so nothing has
// to be picked twice. Without JavaScript the boxes work as they are.
const bulk = document.querySelector("form[data-selection]");
if (bulk) {
  const boxes = () => [...bulk.querySelectorAll("input[type=checkbox][name=id]")];
  const count = bulk.querySelector("[data-selection-count]");
  const all = bulk.querySelector("[data-select-all]");
  const none = bulk.querySelector("[data-select-none]");
  const again = new Set((bulk.dataset.selection || "").split(" ").filter(Boolean));
  for (const b of boxes()) if (again.has(b.value)) b.checked = true;
  const show = () => {
    const n = boxes().filter((b) => b.checked).length;
    count.textContent = n === 0 ? "None selected" : `${n} selected`;
    bulk.querySelector("[data-selection-bar]").classList.toggle("has-selection", n > 0);
    all.hidden = boxes().length === 0 || n === boxes().length;
    none.hidden = n === 0;
  };
  bulk.addEventListener("change", show);
  all.addEventListener("click", () => { for (const b of boxes()) b.checked = true; show(); });
  none.addEventListener("click", () => { for (const b of boxes()) b.checked = false; show(); });
  show();
}

// A confirmation in the address (?done=…, ?sent=…) is shown once: the
// address loses it, so a reload or a bookmark does not say it again.
{
  const url = new URL(window.location.href);
  let changed = false;
  for (const k of ["done", "n", "sent"]) {
    if (url.searchParams.has(k)) { url.searchParams.delete(k); changed = true; }
  }
  if (changed) window.history.replaceState(null, "", url.pathname + url.search + url.hash);
}

// Moments (<time data-ago>) say how long ago they were, kept current, and
// show the local date and time on hover.
{
  const say = (ms) => {
    const s = Math.round(ms / 1000);
    if (s < 5) return "just now";
    if (s < 60) return `${s} s ago`;
    if (s < 3600) return `${Math.floor(s / 60)} min ago`;
    if (s < 48 * 3600) return `${Math.floor(s / 3600)} h ago`;
    return `${Math.floor(s / 86400)} days ago`;
  };
  const update = () => {
    for (const el of document.querySelectorAll("time[data-ago]")) {
      const t = Date.parse(el.getAttribute("datetime"));
      if (Number.isNaN(t)) continue;
      el.textContent = say(Math.max(0, Date.now() - t));
      el.title = new Date(t).toLocaleString();
    }
  };
  update();
  setInterval(update, 15000);
}

// The plain catalog announces packages indexed since it was made: it asks
// /api/packages/new (two primary-key probes) every 5 s while an ingestion
// cycle runs and every 10 s otherwise, not while the tab is hidden, and
// shows "N new packages — show", a link that reloads the page. It never
// reloads by itself: the reader may be busy with the page.
const fresh = document.querySelector("[data-new-packages]");
if (fresh) {
  const since = fresh.dataset.since || "0";
  const show = fresh.querySelector("[data-new-packages-show]");
  const look = async () => {
    let delay = 10000;
    if (!document.hidden) {
      try {
        const res = await fetch(`/api/packages/new?since=${encodeURIComponent(since)}`, { headers: { Accept: "application/json" } });
        if (res.ok) {
          const st = await res.json();
          if (st.running) delay = 5000;
          if (st.new > 0) {
            show.textContent = `${st.new}${st.capped ? "+" : ""} new ${st.new === 1 ? "package" : "packages"} — show`;
            fresh.hidden = false;
          }
        }
      } catch { /* try again */ }
    }
    setTimeout(look, delay);
  };
  setTimeout(look, document.querySelector("[data-ingesting]") ? 2000 : 5000);
}

// Bot sends tables ([data-sends-table]) refresh the status and progress of
// their deliveries every 2 s while any is still PENDING or SENDING.
for (const table of document.querySelectorAll("[data-sends-table]")) {
  const unfinished = () => [...table.querySelectorAll("[data-send]")]
    .filter((row) => row.dataset.sendStatus === "PENDING" || row.dataset.sendStatus === "SENDING");
  const refresh = async () => {
    if (unfinished().length === 0) return;
    try {
      const res = await fetch(table.dataset.sendsUrl, { headers: { Accept: "application/json" } });
      if (res.ok) {
        const data = await res.json();
        for (const item of data.items || []) {
          const row = table.querySelector(`[data-send="${item.id}"]`);
          if (!row) continue;
          row.dataset.sendStatus = item.status;
          const state = row.querySelector("[data-send-state]");
          state.textContent = item.status + (item.status !== "SENT" && item.parts_total ? ` · ${item.parts_sent}/${item.parts_total} parts` : "");
          let err = row.querySelector("[data-send-error]");
          if (item.error && !err) {
            err = document.createElement("span");
            err.className = "bad";
            err.dataset.sendError = "";
            state.after(" ", err);
          }
          if (err) err.textContent = item.error || "";
        }
      }
    } catch { /* try again on the next tick */ }
    if (unfinished().length > 0) setTimeout(refresh, 2000);
  };
  setTimeout(refresh, 2000);
}
