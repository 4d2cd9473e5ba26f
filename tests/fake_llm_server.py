"""A local HTTP server that speaks the OpenAI chat-completions and Anthropic messages wire protocols, so
tests drive the real SDKs end to end. Each request takes the next planned action; requests are recorded."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def ok(text: str, input_tokens: int = 11, output_tokens: int = 7, finish: str | None = None) -> dict:
    return {"kind": "ok", "text": text, "in": input_tokens, "out": output_tokens, "finish": finish}


def error(status: int, message: str, code: str | None = None, headers: dict | None = None) -> dict:
    return {"kind": "error", "status": status, "message": message, "code": code, "headers": headers or {}}


def stall(seconds: float) -> dict:
    return {"kind": "stall", "seconds": seconds}


class FakeLLMServer:
    def __init__(self):
        self.plan: list[dict] = []
        self.requests: list[dict] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):  # keep test output clean
                pass

            def do_POST(self):
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                with server._lock:
                    server.requests.append({"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}, "json": body})
                    action = server.plan.pop(0) if server.plan else error(500, "no planned response left")
                if action["kind"] == "stall":
                    time.sleep(action["seconds"])
                    action = ok("too late")
                anthropic = self.path.endswith("/messages")
                if action["kind"] == "error":
                    payload = ({"type": "error", "error": {"type": "api_error", "message": action["message"]}}
                               if anthropic else
                               {"error": {"message": action["message"], "type": "error", "code": action["code"]}})
                    return self._send(action["status"], payload, action["headers"])
                if anthropic:
                    payload = {"id": "msg_test", "type": "message", "role": "assistant", "model": body.get("model"),
                               "content": [{"type": "text", "text": action["text"]}],
                               "stop_reason": action["finish"] or "end_turn", "stop_sequence": None,
                               "usage": {"input_tokens": action["in"], "output_tokens": action["out"]}}
                else:
                    payload = {"id": "chatcmpl-test", "object": "chat.completion", "created": 0,
                               "model": body.get("model"),
                               "choices": [{"index": 0, "message": {"role": "assistant", "content": action["text"]},
                                            "finish_reason": action["finish"] or "stop"}],
                               "usage": {"prompt_tokens": action["in"], "completion_tokens": action["out"],
                                         "total_tokens": action["in"] + action["out"]}}
                self._send(200, payload, {})

            def do_GET(self):  # model listing, as local OpenAI-compatible servers offer
                if self.path.endswith("/models"):
                    return self._send(200, {"object": "list", "data": [{"id": "local-model", "object": "model"}]}, {})
                self._send(404, {"error": {"message": "not found"}}, {})

            def _send(self, status: int, payload: dict, headers: dict):
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout tests)
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
