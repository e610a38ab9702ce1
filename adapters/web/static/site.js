// praxis settings: the passkey ceremonies, copying a secret, downloading a
// configuration. Loaded from the site itself; no inline script anywhere.
"use strict";

const csrf = () => document.querySelector('meta[name="csrf-token"]').content;

async function post(url, body) {
  const res = await fetch(url, {
    method: "POST",
    credentials: "same-origin",
    headers: { "Content-Type": "application/json", "Accept": "application/json", "X-CSRF-Token": csrf() },
    body: JSON.stringify(body || {}),
  });
  const answer = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(answer.error || res.statusText);
  return answer;
}

async function ceremony(button) {
  const box = button.closest("main").querySelector("[data-status]");
  const nameInput = button.closest("main").querySelector("[data-passkey-name]");
  const say = (text) => { if (box) box.textContent = text; };
  button.disabled = true;
  try {
    const options = await post(button.dataset.begin);
    let credential;
    if (button.dataset.passkey === "create") {
      const publicKey = PublicKeyCredential.parseCreationOptionsFromJSON(options.publicKey);
      credential = await navigator.credentials.create({ publicKey });
    } else {
      const publicKey = PublicKeyCredential.parseRequestOptionsFromJSON(options.publicKey);
      credential = await navigator.credentials.get({ publicKey });
    }
    const body = { credential: credential.toJSON(), name: nameInput ? nameInput.value : "" };
    const done = await post(button.dataset.finish, body);
    location.assign(button.dataset.next || done.next || "/settings/");
  } catch (e) {
    say(e.message);
    button.disabled = false;
  }
}

document.addEventListener("DOMContentLoaded", () => {
  const follow = document.querySelector("a[data-follow]");
  if (follow) location.replace(follow.href);
  for (const b of document.querySelectorAll("[data-passkey]")) {
    b.addEventListener("click", () => ceremony(b));
  }
  for (const b of document.querySelectorAll("[data-copy]")) {
    b.addEventListener("click", async () => {
      await navigator.clipboard.writeText(document.getElementById(b.dataset.copy).textContent);
      b.textContent = "✓";
    });
  }
  for (const b of document.querySelectorAll("[data-download]")) {
    b.addEventListener("click", () => {
      const text = document.getElementById(b.dataset.download).textContent;
      const a = document.createElement("a");
      a.href = URL.createObjectURL(new Blob([text], { type: "text/plain" }));
      a.download = b.dataset.filename;
      a.click();
      URL.revokeObjectURL(a.href);
    });
  }
});
