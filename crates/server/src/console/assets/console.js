// The Warden console: the pauses waiting (live, over server-sent events), one
// pause answered call by call, and the journal. Plain DOM, no framework: every
// text from the daemon goes in as text, never as HTML.
"use strict";

const view = document.getElementById("view");
const statusLine = document.getElementById("status");
let csrf = "";

// ---- small helpers -------------------------------------------------------

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function say(text) {
  statusLine.textContent = text;
}

function when(rfc3339) {
  const date = new Date(rfc3339);
  return isNaN(date) ? rfc3339 : date.toLocaleString();
}

// Every call to the console API; a change carries the CSRF token.
async function api(method, path, body) {
  const headers = {};
  if (method !== "GET") {
    headers["X-CSRF-Token"] = csrf;
    headers["Content-Type"] = "application/json";
  }
  const response = await fetch(path, {
    method,
    headers,
    credentials: "same-origin",
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (response.status === 401) {
    window.location.assign("/console/login");
    throw new Error("signed out");
  }
  const answer = response.status === 204 ? {} : await response.json().catch(() => ({}));
  if (!response.ok) {
    const message = (answer.error && answer.error.message) || `HTTP ${response.status}`;
    const error = new Error(message);
    error.status = response.status;
    error.body = answer;
    throw error;
  }
  return answer;
}

function reasonsList(reasons) {
  if (!reasons || reasons.length === 0) return null;
  return el("ul", { class: "reasons" },
    reasons.map((r) => el("li", {}, el("code", { text: r.code }), " ", r.message || "")));
}

// "run", or "denied: <why>" for a call a human or a rule refused.
function outcomeText(call) {
  if (call.status === "denied") {
    const why = (call.reasons || []).map((r) => r.message || r.code).join("; ");
    return `denied: ${why}`;
  }
  return call.status;
}

// ---- live events ------------------------------------------------------------

let currentSource = null;

// One stream per page: a view drawn again replaces the previous one's.
function listen(onEvent) {
  if (currentSource) currentSource.close();
  const source = new EventSource("/console/api/events");
  currentSource = source;
  const live = document.getElementById("live");
  source.addEventListener("open", () => { if (live) live.textContent = "live"; });
  source.addEventListener("error", () => { if (live) live.textContent = "reconnecting…"; });
  for (const kind of ["paused", "resolved", "resync"]) {
    source.addEventListener(kind, (event) => {
      let data = {};
      try { data = JSON.parse(event.data); } catch (e) { /* resync has none */ }
      onEvent(kind, data);
    });
  }
  window.addEventListener("pagehide", () => source.close());
  return source;
}

// ---- the list of pauses waiting ------------------------------------------

async function showList() {
  document.title = "Warden · waiting";
  const heading = el("h1", {}, "Waiting for a human ", el("span", { id: "live", class: "badge", text: "connecting…" }));
  const list = el("ul", { id: "approvals", class: "cards" });
  const empty = el("p", { id: "empty", class: "muted", text: "Nothing is waiting." });
  view.replaceChildren(heading, list, empty);
  view.setAttribute("aria-busy", "false");

  async function refresh() {
    const { approvals } = await api("GET", "/console/api/approvals");
    list.replaceChildren(...approvals.map((a) => el("li", { class: "card", "data-approval-id": a.approval_id },
      el("a", { href: `/console/approvals/${encodeURIComponent(a.approval_id)}`, class: "title" },
        a.tools.join(", ") || "(no tool)"),
      el("dl", { class: "meta" },
        el("dt", { text: "Thread" }), el("dd", { text: a.thread_id }),
        el("dt", { text: "Agent" }), el("dd", { text: a.principal }),
        el("dt", { text: "Run" }), el("dd", { text: a.run_id }),
        el("dt", { text: "Since" }), el("dd", {}, el("time", { datetime: a.created_at, text: when(a.created_at) }))),
    )));
    empty.hidden = approvals.length > 0;
  }
  await refresh();
  listen(async (kind, data) => {
    await refresh();
    if (kind === "paused") say(`New pause: ${(data.tools || []).join(", ")} on thread ${data.thread_id}`);
    if (kind === "resolved") say(`Answered: thread ${data.thread_id}`);
  });
}

// ---- one pause ------------------------------------------------------------

function field(f) {
  const value = f.full
    ? el("details", {}, el("summary", {}, el("code", { text: f.short })), el("pre", { class: "full", text: f.full }))
    : el("code", { text: f.short });
  return [el("dt", { text: f.name || "(value)" }), el("dd", {}, value)];
}

function requestForm(request, index) {
  const rid = request.request_id;
  const name = `decision-${index}`;
  const choice = (value, label) => el("label", { class: "choice" },
    el("input", { type: "radio", name, value, "data-request-id": rid }), " ", label);
  const message = el("textarea", { id: `message-${index}`, rows: 2, "data-request-id": rid });
  const edit = el("textarea", { id: `edit-${index}`, rows: 6, spellcheck: "false", class: "code", "data-request-id": rid });
  edit.value = request.args_json;
  const outcome = el("p", { id: `outcome-${index}`, class: "outcome", role: "status", "aria-live": "polite", "data-request-id": rid });
  const check = el("button", { type: "button", class: "quiet", id: `check-${index}` }, "Check this edit");
  const messageBox = el("div", { class: "when-reject", hidden: true },
    el("label", { for: `message-${index}` }, "Message to the agent (optional)"), message);
  // "Approve, and allow the same for a while": never wider than chosen here.
  const grantMinutes = el("select", { id: `grant-${index}` },
    el("option", { value: "" }, "no"),
    [15, 30, 60, 240, 1440].map((m) => el("option", { value: String(m) }, m < 60 ? `${m} minutes` : `${m / 60} hour${m > 60 ? "s" : ""}`)));
  const grantScope = el("select", { id: `grant-scope-${index}` },
    el("option", { value: "thread" }, "in this thread"),
    el("option", { value: "agent" }, "for this agent, every thread"));
  const grantRule = el("input", { id: `grant-rule-${index}`, type: "text", spellcheck: "false", class: "code",
    placeholder: "the same call only" });
  const grantBox = el("div", { class: "when-approve", hidden: true },
    el("label", { for: `grant-${index}` }, "Also allow the same without asking for"), grantMinutes,
    el("label", { for: `grant-scope-${index}` }, "Where"), grantScope,
    el("label", { for: `grant-rule-${index}` }, "Or the calls this rule matches (optional, e.g. Bash(git push origin *))"), grantRule);
  const editBox = el("div", { class: "when-edit", hidden: true },
    el("label", { for: `edit-${index}` }, "New arguments (JSON object)"), edit,
    request.redacted ? el("p", { class: "muted", text: "Values shown as [REDACTED] must be given again." }) : null,
    check);
  const box = el("fieldset", { class: "request", "data-request-id": rid },
    el("legend", {}, el("span", { class: "tool", text: request.tool_name }), " ",
      el("span", { class: "muted", text: request.tool_call_id || "" })),
    el("dl", { class: "args" }, request.fields.map(field)),
    reasonsList(request.reasons),
    el("div", { class: "choices", role: "radiogroup", "aria-label": `Decision on ${request.tool_name}` },
      choice("approve", "Approve"), choice("reject", "Reject"), choice("edit", "Edit")),
    grantBox, messageBox, editBox, outcome);
  box.addEventListener("change", (event) => {
    if (event.target.name !== name) return;
    grantBox.hidden = event.target.value !== "approve";
    messageBox.hidden = event.target.value !== "reject";
    editBox.hidden = event.target.value !== "edit";
    outcome.textContent = "";
  });
  check.addEventListener("click", () => checkEdit(request, index));
  return box;
}

// The edited arguments, parsed; throws with what is wrong.
function editedArgs(index) {
  const text = document.getElementById(`edit-${index}`).value;
  let args;
  try { args = JSON.parse(text); } catch (e) { throw new Error(`not JSON: ${e.message}`); }
  if (args === null || typeof args !== "object" || Array.isArray(args)) throw new Error("must be a JSON object");
  if (text.includes("[REDACTED]")) throw new Error("give the [REDACTED] values again");
  return args;
}

let approvalId = "";

// Judges an edit as the resume will; true when the policy lets it run.
async function checkEdit(request, index) {
  const outcome = document.getElementById(`outcome-${index}`);
  let args;
  try { args = editedArgs(index); } catch (e) {
    outcome.textContent = `invalid edit: ${e.message}`;
    outcome.className = "outcome bad";
    return false;
  }
  const answer = await api("POST", `/console/api/approvals/${encodeURIComponent(approvalId)}/check`,
    { request_id: request.request_id, args });
  if (answer.verdict === "deny") {
    outcome.textContent = outcomeText({ status: "denied", reasons: answer.reasons });
    outcome.className = "outcome bad";
    return false;
  }
  outcome.textContent = `edit allowed (${answer.verdict})`;
  outcome.className = "outcome good";
  return true;
}

// Who answered: an approver by name; a relayed answer as the name the relay
// gave, quoted, and apart from it the relay token that gave it.
function reviewerText(reviewer, relayedBy) {
  if (!reviewer) return "—";
  if (!relayedBy) return el("span", { class: "reviewer", text: reviewer });
  return el("span", {},
    el("q", { class: "reviewer", text: reviewer }), " ",
    el("span", { class: "relay", text: `relayed by ${relayedBy}` }));
}

function showResolution(container, resolution) {
  container.replaceChildren(
    el("h2", { text: "Answered" }),
    el("p", { class: "muted" }, "by ", reviewerText(resolution.reviewer, resolution.relayed_by), ` at ${when(resolution.resolved_at)}`),
    el("ul", { id: "resolution", class: "outcomes" }, resolution.calls.map((c) =>
      el("li", { "data-request-id": c.request_id || "", "data-status": c.status },
        el("span", { class: "tool", text: c.name }), " ",
        el("span", { class: "muted", text: c.id || "" }), " ",
        c.decision ? el("span", { class: "badge", text: c.decision }) : null, " ",
        el("span", { class: c.status === "denied" ? "bad" : "good", text: outcomeText(c) })))));
}

async function showApproval(id) {
  approvalId = id;
  const detail = await api("GET", `/console/api/approvals/${encodeURIComponent(id)}`);
  document.title = `Warden · ${detail.requests.map((r) => r.tool_name).join(", ")}`;
  const meta = el("dl", { class: "meta wide" },
    el("dt", { text: "Thread" }), el("dd", { text: detail.thread_id }),
    el("dt", { text: "Agent" }), el("dd", { text: detail.principal }),
    el("dt", { text: "Run" }), el("dd", { text: detail.run_id }),
    el("dt", { text: "Mode" }), el("dd", { text: detail.interaction_mode }),
    el("dt", { text: "Since" }), el("dd", {}, el("time", { datetime: detail.created_at, text: when(detail.created_at) })),
    el("dt", { text: "Status" }), el("dd", { id: "approval-status", text: detail.status }));
  const answerBox = el("section", { id: "answer", "aria-label": "Answer" });
  view.replaceChildren(
    el("p", {}, el("a", { href: "/console" }, "← Waiting")),
    el("h1", { text: `Approval ${detail.approval_id}` }), meta);
  view.setAttribute("aria-busy", "false");

  if (detail.others.length > 0) {
    view.append(el("details", { class: "others" },
      el("summary", { text: `${detail.others.length} other call(s) of this response` }),
      el("ul", {}, detail.others.map((c) => el("li", {}, el("span", { class: "tool", text: c.name }), " ", outcomeText(c))))));
  }
  if (detail.status !== "pending" || detail.resolution) {
    if (detail.resolution) showResolution(answerBox, detail.resolution);
    else answerBox.append(el("p", { text: `This pause is ${detail.status}.` }));
    view.append(answerBox);
    return;
  }

  const form = el("form", { id: "decide", novalidate: true },
    detail.requests.map(requestForm),
    el("div", { class: "actions" },
      el("button", { type: "submit", id: "send" }, "Send answer")));
  const rejectMessage = el("input", { id: "reject-all-message", type: "text" });
  const rejectAll = el("form", { id: "reject-all", class: "reject-all" },
    el("label", { for: "reject-all-message" }, "Reject every call, with a message (optional)"),
    rejectMessage,
    el("button", { type: "submit", class: "danger" }, "Reject all"));
  const error = el("p", { id: "error", class: "error", role: "alert" });
  answerBox.append(form, rejectAll, error);
  view.append(answerBox);

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.textContent = "";
    const decisions = [];
    for (const [index, request] of detail.requests.entries()) {
      const picked = form.querySelector(`input[name="decision-${index}"]:checked`);
      if (!picked) {
        error.textContent = `Choose approve, reject or edit for ${request.tool_name}.`;
        form.querySelector(`input[name="decision-${index}"]`).focus();
        return;
      }
      const decision = { request_id: request.request_id, decision: picked.value };
      const minutes = document.getElementById(`grant-${index}`).value;
      if (picked.value === "approve" && minutes) {
        decision.grant = { minutes: Number(minutes), scope: document.getElementById(`grant-scope-${index}`).value };
        const rule = document.getElementById(`grant-rule-${index}`).value.trim();
        if (rule) decision.grant.rule = rule;
      }
      if (picked.value === "reject") {
        const message = document.getElementById(`message-${index}`).value.trim();
        if (message) decision.message = message;
      }
      if (picked.value === "edit") {
        // An edit the rules deny is shown here, and not sent: the human can
        // correct it. The daemon judges it again at the resume all the same.
        if (!(await checkEdit(request, index))) {
          error.textContent = `The edit of ${request.tool_name} is not allowed; change it or choose another decision.`;
          document.getElementById(`edit-${index}`).focus();
          return;
        }
        decision.args = editedArgs(index);
      }
      decisions.push(decision);
    }
    try {
      const resolution = await api("POST", `/console/api/approvals/${encodeURIComponent(id)}/resume`, { decisions });
      showResolution(answerBox, resolution);
      document.getElementById("approval-status").textContent = "resumed";
      say("Answer sent.");
      answerBox.querySelector("h2").setAttribute("tabindex", "-1");
      answerBox.querySelector("h2").focus();
    } catch (e) {
      error.textContent = e.message;
    }
  });
  rejectAll.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.textContent = "";
    try {
      const message = rejectMessage.value.trim();
      const resolution = await api("POST", `/console/api/approvals/${encodeURIComponent(id)}/reject-all`,
        message ? { message } : {});
      showResolution(answerBox, resolution);
      document.getElementById("approval-status").textContent = "resumed";
      say("Every call rejected.");
    } catch (e) {
      error.textContent = e.message;
    }
  });
  listen(async (kind, data) => {
    if (document.getElementById("resolution")) return;
    if (kind === "resolved" && data.approval_id === id) {
      say("Someone else answered this pause.");
      showApproval(id);
    } else if (kind === "resync") {
      // Approvals expired: this one may be among them.
      const now = await api("GET", `/console/api/approvals/${encodeURIComponent(id)}`);
      if (now.status !== "pending") {
        say(`This pause is ${now.status}.`);
        showApproval(id);
      }
    }
  });
}

// ---- the journal ------------------------------------------------------------

async function showHistory() {
  document.title = "Warden · history";
  const body = el("tbody", { id: "history" });
  const more = el("button", { type: "button", class: "quiet", hidden: true }, "Older");
  view.replaceChildren(el("h1", { text: "History" }),
    el("div", { class: "scroll" }, el("table", {},
      el("caption", { class: "muted", text: "Newest first. Arguments are journalled as digests only." }),
      el("thead", {}, el("tr", {}, ["When", "What", "Thread", "Agent", "Reviewer", "Calls"].map((h) => el("th", { scope: "col", text: h })))),
      body)),
    more);
  view.setAttribute("aria-busy", "false");
  let older = null;
  async function load() {
    const page = await api("GET", older === null ? "/console/api/history" : `/console/api/history?before=${older}`);
    body.append(...page.events.map((e) => el("tr", {},
      el("td", {}, el("time", { datetime: e.at, text: when(e.at) })),
      el("td", {}, el("a", { href: `/console/approvals/${encodeURIComponent(e.approval_id)}`, text: e.kind })),
      el("td", { text: e.thread_id }),
      el("td", { text: e.principal }),
      el("td", {}, e.reviewer ? reviewerText(e.reviewer, e.relayed_by) : ""),
      el("td", {}, e.calls.map((c) => el("div", {}, `${c.tool_name}: ${c.decision ? c.decision + ", " : ""}${c.status}`))))));
    older = page.older === undefined ? null : page.older;
    more.hidden = older === null;
  }
  more.addEventListener("click", load);
  await load();
}

// ---- start ------------------------------------------------------------------

async function start() {
  const session = await api("GET", "/console/api/session");
  csrf = session.csrf;
  document.getElementById("who").textContent = `${session.name} (${session.role})`;
  document.getElementById("logout").addEventListener("click", async () => {
    await api("POST", "/console/logout").catch(() => {});
    window.location.assign("/console/login");
  });
  const path = window.location.pathname.replace(/\/+$/, "");
  const detail = path.match(/^\/console\/approvals\/([^/]+)$/);
  for (const link of document.querySelectorAll("nav a")) {
    if (link.getAttribute("href") === (detail ? "/console" : path || "/console")) link.setAttribute("aria-current", "page");
  }
  if (detail) await showApproval(decodeURIComponent(detail[1]));
  else if (path === "/console/history") await showHistory();
  else await showList();
}

start().catch((e) => {
  if (e.message !== "signed out") {
    view.replaceChildren(el("p", { class: "error", role: "alert", text: `The console could not load: ${e.message}` }));
  }
});
