#!/usr/bin/env python3
"""A fake Anthropic Messages API on 127.0.0.1 for agent tests.

    python3 fake_anthropic.py PORT_FILE LOG_FILE

Listens on a free port (written to PORT_FILE), answers POST /v1/messages
(streaming or not) and logs one JSON line per request to LOG_FILE. The
main agent loop (a request that offers tools) gets one tool call: the Bash
tool, running the command in $FAKE_WRONG, or in $FAKE_RIGHT when the
request's text contains $FAKE_FEEDBACK (the check's failure that only the
retry prompt carries). A request holding that tool's result gets a final
text. Any other request (titles, summaries) gets a short text.
"""
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

WRONG = os.environ.get("FAKE_WRONG", "true")
RIGHT = os.environ.get("FAKE_RIGHT", "true")
FEEDBACK = os.environ.get("FAKE_FEEDBACK", "already failing on the base")
LOG = sys.argv[2] if len(sys.argv) > 2 else os.devnull


def text_of(body):
    out = []
    def walk(x):
        if isinstance(x, str):
            out.append(x)
        elif isinstance(x, list):
            for y in x:
                walk(y)
        elif isinstance(x, dict):
            for y in x.values():
                walk(y)
    walk(body.get("messages", []))
    return "\n".join(out)


def last_has_tool_result(body):
    msgs = body.get("messages", [])
    if not msgs:
        return False
    content = msgs[-1].get("content")
    return isinstance(content, list) and any(isinstance(c, dict) and c.get("type") == "tool_result" for c in content)


def reply(body):
    """(content blocks, stop_reason)"""
    tools = [t.get("name") for t in body.get("tools", []) if isinstance(t, dict)]
    if "Bash" in tools and not last_has_tool_result(body):
        cmd = RIGHT if FEEDBACK in text_of(body) else WRONG
        return [{"type": "tool_use", "id": "toolu_fake_1", "name": "Bash",
                 "input": {"command": cmd, "description": "edit the code"}}], "tool_use"
    if last_has_tool_result(body):
        return [{"type": "text", "text": "I changed calc.py; the tests should pass now."}], "end_turn"
    return [{"type": "text", "text": "ok"}], "end_turn"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self):
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n)
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        blocks, stop = reply(body) if self.path.startswith("/v1/messages") and "count_tokens" not in self.path else ([], "end_turn")
        with open(LOG, "a") as f:
            f.write(json.dumps({"path": self.path, "stream": body.get("stream", False),
                                "tools": len(body.get("tools", [])), "answer": stop,
                                "feedback": FEEDBACK in text_of(body)}) + "\n")
        if "count_tokens" in self.path:
            return self.json({"input_tokens": 10})
        if not self.path.startswith("/v1/messages"):
            return self.json({})
        usage = {"input_tokens": 1200, "output_tokens": 80, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
        msg = {"id": "msg_fake", "type": "message", "role": "assistant", "model": body.get("model", "fake"),
               "content": blocks, "stop_reason": stop, "stop_sequence": None, "usage": usage}
        if not body.get("stream"):
            return self.json(msg)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()

        def ev(kind, data):
            self.wfile.write(f"event: {kind}\ndata: {json.dumps(data)}\n\n".encode())

        ev("message_start", {"type": "message_start", "message": dict(msg, content=[], stop_reason=None,
                                                                          usage=dict(usage, output_tokens=1))})
        for i, b in enumerate(blocks):
            if b["type"] == "text":
                ev("content_block_start", {"type": "content_block_start", "index": i,
                                           "content_block": {"type": "text", "text": ""}})
                ev("content_block_delta", {"type": "content_block_delta", "index": i,
                                           "delta": {"type": "text_delta", "text": b["text"]}})
            else:
                ev("content_block_start", {"type": "content_block_start", "index": i,
                                           "content_block": {"type": "tool_use", "id": b["id"], "name": b["name"], "input": {}}})
                ev("content_block_delta", {"type": "content_block_delta", "index": i,
                                           "delta": {"type": "input_json_delta", "partial_json": json.dumps(b["input"])}})
            ev("content_block_stop", {"type": "content_block_stop", "index": i})
        ev("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                             "usage": {"output_tokens": usage["output_tokens"]}})
        ev("message_stop", {"type": "message_stop"})
        self.wfile.flush()
        self.close_connection = True

    def json(self, obj):
        data = json.dumps(obj).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(sys.argv[1] + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    server.serve_forever()


if __name__ == "__main__":
    main()
