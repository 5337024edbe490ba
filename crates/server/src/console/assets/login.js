// The sign-in page: the token goes in a JSON body (never a URL), once; the
// session cookie comes back, and the field is cleared whatever happens.
"use strict";

document.getElementById("login").addEventListener("submit", async (event) => {
  event.preventDefault();
  const field = document.getElementById("token");
  const error = document.getElementById("error");
  const token = field.value.trim();
  field.value = "";
  error.textContent = "";
  if (!token) {
    error.textContent = "Paste an approver token.";
    field.focus();
    return;
  }
  try {
    const response = await fetch("/console/login", {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ token }),
    });
    if (response.ok) {
      window.location.assign("/console");
      return;
    }
    const body = await response.json().catch(() => ({}));
    error.textContent = (body.error && body.error.message) || `Sign-in failed (${response.status}).`;
  } catch (e) {
    error.textContent = "The daemon could not be reached.";
  }
  field.focus();
});
