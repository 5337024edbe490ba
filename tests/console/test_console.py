"""The web console in a real headless Chromium, against the real `warden serve`.

A harness (this test, over HTTP with an agent token) pauses a model response
with three calls; a human (the browser, signed in with an approver token) sees
the pause arrive live, opens it, approves one call (granting the same call
for half an hour), edits another (first with arguments a rule denies, which the
page shows denied, then with valid ones), rejects the third with a message; the harness reads exactly those decisions
back. Cross-origin and CSRF-less changes are refused. Screenshots go to
target/console-shots/.

Needs WARDEN_BIN (default target/debug/warden) and Chromium at
/usr/bin/chromium (or CHROMIUM); Playwright drives it, no browser download.
"""

import http.server
import json
import os
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from playwright.sync_api import expect, sync_playwright

ROOT = Path(__file__).resolve().parents[2]
WARDEN_BIN = os.environ.get("WARDEN_BIN", str(ROOT / "target" / "debug" / "warden"))
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
SHOTS = ROOT / "target" / "console-shots"

APPROVER_TOKEN = "approver-token-for-the-console-test-0123456789"
AGENT_TOKEN = "agent-token-for-the-console-test-0123456789"

CONFIG = """
permissions:
  mode: full_auto
  deny: ["Bash(rm *)"]
hitl_approval:
  tools: [bash]
guardrails:
  providers:
    - name: allowlist
      wasm: builtin:allowlist
      config: {allowed_tools: [bash, read_file], denied_tools: []}
server:
  watch_config: false
  tokens:
    - {name: alice, role: approver, token_env: WARDEN_TEST_APPROVER_TOKEN}
    - {name: harness, role: agent, token_env: WARDEN_TEST_AGENT_TOKEN}
"""


@pytest.fixture(scope="module")
def daemon():
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "warden.yaml").write_text(CONFIG)
        env = dict(os.environ,
                   WARDEN_TEST_APPROVER_TOKEN=APPROVER_TOKEN,
                   WARDEN_TEST_AGENT_TOKEN=AGENT_TOKEN,
                   WARDEN_LOG="info")
        log = open(Path(tmp, "stderr.log"), "w")
        process = subprocess.Popen(
            [WARDEN_BIN, "serve", "--config", "warden.yaml", "--listen", "127.0.0.1:0", "--no-watch"],
            cwd=tmp, env=env, stdout=subprocess.PIPE, stderr=log, text=True)
        line = process.stdout.readline().strip()
        assert line.startswith("warden: listening on "), (line, Path(tmp, "stderr.log").read_text())
        url = line.removeprefix("warden: listening on ")
        try:
            yield url, Path(tmp, "stderr.log")
        finally:
            process.terminate()
            process.wait(timeout=20)
            log.close()


def call(url, method, path, token=None, body=None, headers=None):
    """One HTTP request; (status, JSON answer or None)."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url + path, data=data, method=method)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    for key, value in (headers or {}).items():
        request.add_header(key, value)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            text = response.read()
            return response.status, (json.loads(text) if text else None)
    except urllib.error.HTTPError as error:
        text = error.read()
        try:
            return error.code, json.loads(text)
        except ValueError:
            return error.code, None


def pause(url, thread, calls):
    status, outcome = call(url, "POST", f"/v1/threads/{thread}/runs/run-1/tool-calls",
                           token=AGENT_TOKEN, body={"message": {"tool_calls": calls}})
    assert status == 200, outcome
    assert outcome["run_state"] == "waiting_for_input", outcome
    return outcome


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as p:
        args = ["--no-sandbox"] if os.geteuid() == 0 else []
        browser = p.chromium.launch(executable_path=CHROMIUM, args=args)
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def other_origin():
    """A page on another origin (same host, another port): what a malicious
    page the approver has open could do."""
    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = b"<!doctype html><title>elsewhere</title><p>another site</p>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def sign_in(page, url):
    page.goto(url + "/console")
    expect(page).to_have_url(url + "/console/login")
    page.get_by_label("Approver token").fill(APPROVER_TOKEN)
    page.get_by_role("button", name="Sign in").click()
    expect(page).to_have_url(url + "/console")
    expect(page.locator("#who")).to_have_text("alice (approver)")


def test_a_human_answers_a_pause_call_by_call_in_the_console(daemon, browser, other_origin):
    url, stderr = daemon
    SHOTS.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    page = context.new_page()
    sign_in(page, url)
    expect(page.locator("#live")).to_have_text("live", timeout=10_000)
    # Marks this page load: a reload would lose it.
    page.evaluate("window.__sameLoad = true")

    outcome = pause(url, "thread-42", [
        {"id": "call_a", "name": "bash", "args": {"command": "git status"}},
        {"id": "call_b", "name": "bash", "args": {"command": "ls /tmp"}},
        {"id": "call_c", "name": "bash", "args": {"command": "git push origin main --force"}},
    ])
    approval_id = outcome["approval_id"]
    request_ids = [r["request_id"] for r in outcome["requests"]]
    assert len(request_ids) == 3

    # The pause appears without a reload (server-sent events).
    card = page.locator(f'li[data-approval-id="{approval_id}"]')
    expect(card).to_be_visible(timeout=10_000)
    assert page.evaluate("window.__sameLoad") is True
    expect(page.locator("#status")).to_contain_text("New pause")
    page.screenshot(path=str(SHOTS / "console-list.png"), full_page=True)

    card.get_by_role("link").click()
    expect(page).to_have_url(f"{url}/console/approvals/{approval_id}")
    expect(page.locator("fieldset.request")).to_have_count(3)
    expect(page.locator("#main")).to_contain_text("thread-42")

    # Approve the first by keyboard.
    page.locator('input[name="decision-0"][value="approve"]').focus()
    page.keyboard.press("Space")
    expect(page.locator('input[name="decision-0"][value="approve"]')).to_be_checked()
    # ... and allow the same call in this thread for 30 minutes.
    page.locator("#grant-0").select_option("30")

    # Edit the second, first into something a rule denies.
    page.locator('input[name="decision-1"][value="edit"]').check()
    page.locator("#edit-1").fill('{"command": "rm -rf /tmp/cache"}')
    page.locator('input[name="decision-2"][value="reject"]').check()
    page.locator("#message-2").fill("no force-push to main")
    page.get_by_role("button", name="Send answer").click()
    expect(page.locator("#outcome-1")).to_contain_text("denied:", timeout=10_000)
    expect(page.locator("#error")).to_contain_text("not allowed")
    # Nothing was sent: the pause still waits.
    status, listed = call(url, "GET", "/v1/threads/thread-42/approvals", token=AGENT_TOKEN)
    assert status == 200 and len(listed["approvals"]) == 1, listed
    page.screenshot(path=str(SHOTS / "console-detail.png"), full_page=True)

    # Then a valid edit.
    page.locator("#edit-1").fill('{"command": "ls -la /tmp"}')
    page.get_by_role("button", name="Send answer").click()
    resolution = page.locator("#resolution")
    expect(resolution).to_be_visible(timeout=10_000)
    expect(resolution.locator("li")).to_have_count(3)
    expect(resolution.locator('li[data-status="denied"]')).to_contain_text("no force-push to main")
    page.screenshot(path=str(SHOTS / "console-answered.png"), full_page=True)

    # The harness's view of the resolution: exactly those decisions.
    status, page_all = call(url, "GET", "/v1/threads/thread-42/approvals?all=true", token=AGENT_TOKEN)
    assert status == 200, page_all
    resolved = page_all["approvals"][0]
    assert resolved["status"] == "resumed"
    calls = {c["id"]: c for c in resolved["resolution"]["calls"]}
    assert resolved["resolution"]["reviewer"] == "alice"
    assert (calls["call_a"]["status"], calls["call_a"]["decision"]) == ("run", "approve")
    assert (calls["call_b"]["status"], calls["call_b"]["decision"]) == ("run", "edit")
    assert calls["call_b"]["args"] == {"command": "ls -la /tmp"}
    assert (calls["call_c"]["status"], calls["call_c"]["decision"]) == ("denied", "reject")
    assert "no force-push to main" in json.dumps(calls["call_c"]["reasons"])
    # The grant given with the approval, bound to that call and thread.
    status, grants = call(url, "GET", "/v1/grants", token=AGENT_TOKEN)
    assert status == 200, grants
    [grant] = grants["grants"]
    assert (grant["granted_by"], grant["thread_id"], grant["target"]["kind"]) == ("alice", "thread-42", "call")

    # The history lists the pause, its answer and the grant, newest first.
    page.get_by_role("link", name="History").click()
    expect(page.locator("#history tr").first).to_contain_text("granted")
    expect(page.locator("#history tr").nth(1)).to_contain_text("resumed")

    # No token anywhere: not in the page, not in its cookies, not in a URL, not in the log.
    assert APPROVER_TOKEN not in page.content()
    assert all(APPROVER_TOKEN not in c["value"] for c in context.cookies())
    assert APPROVER_TOKEN not in stderr.read_text()
    context.close()


def test_changes_from_another_origin_or_without_the_csrf_token_are_refused(daemon, browser, other_origin):
    url, _ = daemon
    context = browser.new_context()
    page = context.new_page()
    sign_in(page, url)
    outcome = pause(url, "thread-csrf", [{"id": "c1", "name": "bash", "args": {"command": "git push"}}])
    reject_all = f"/console/api/approvals/{outcome['approval_id']}/reject-all"
    cookies = {c["name"]: c["value"] for c in context.cookies()}
    cookie_header = "; ".join(f"{k}={v}" for k, v in cookies.items())

    # The session's cookies, no CSRF header: refused.
    status, body = call(url, "POST", reject_all, body={}, headers={"Cookie": cookie_header})
    assert status == 403, body
    assert body["error"]["code"] == "csrf_refused"
    # The CSRF header too, but from a foreign Origin: refused.
    status, body = call(url, "POST", reject_all, body={}, headers={
        "Cookie": cookie_header, "X-CSRF-Token": cookies["warden_csrf"], "Origin": "https://evil.example"})
    assert status == 403, body

    # A page on another origin that the approver has open tries it with the
    # browser's own cookies (same host, so they are sent).
    page.goto(other_origin)
    page.evaluate("""async (target) => {
        try { await fetch(target, {method: "POST", mode: "no-cors", credentials: "include",
                                   headers: {"Content-Type": "text/plain"}, body: "{}"}); } catch (e) {}
    }""", url + reject_all)
    status, listed = call(url, "GET", "/v1/threads/thread-csrf/approvals", token=AGENT_TOKEN)
    assert status == 200 and len(listed["approvals"]) == 1, listed
    context.close()


def test_an_agent_token_cannot_sign_in_and_the_console_fits_a_phone(daemon, browser):
    url, _ = daemon
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
    page = context.new_page()
    page.goto(url + "/console/login")
    page.get_by_label("Approver token").fill(AGENT_TOKEN)
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator("#error")).to_contain_text("only approver tokens")
    expect(page).to_have_url(url + "/console/login")
    assert AGENT_TOKEN not in page.content()

    sign_in(page, url)
    outcome = pause(url, "thread-phone", [
        {"id": "c1", "name": "bash", "args": {"command": "echo " + "x" * 600}}])
    page.goto(f"{url}/console/approvals/{outcome['approval_id']}")
    expect(page.locator("fieldset.request")).to_have_count(1)
    # Long values are cut, and expand on demand.
    expect(page.locator("dl.args details summary")).to_be_visible()
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the page is {width}px wide on a 390px phone"
    context.close()
