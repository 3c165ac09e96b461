// Small progressive enhancements; every page works without them.

// Forms with data-confirm ask before submitting (e.g. deletions).
document.addEventListener("submit", (ev) => {
  const form = ev.target;
  if (form instanceof HTMLFormElement && form.dataset.confirm && !window.confirm(form.dataset.confirm)) {
    ev.preventDefault();
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

// The notifications bell (administrators) refreshes its unread badge every
// 30 seconds.
const bell = document.querySelector("[data-bell-count]");
if (bell) {
  const refresh = async () => {
    try {
      const res = await fetch("/api/notifications", { headers: { Accept: "application/json" } });
      if (!res.ok) return;
      const body = await res.json();
      bell.textContent = String(body.unread);
      bell.hidden = body.unread === 0;
    } catch { /* offline: keep the last count */ }
  };
  setInterval(refresh, 30000);
}
