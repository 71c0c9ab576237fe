#!/usr/bin/env python3
"""A fake Gemini API (generateContent, streamGenerateContent) on 127.0.0.1
for the Gemini CLI test.

    python3 fake_gemini.py PORT_FILE LOG_FILE

A main request (one that offers the shell tool) without a function's
response gets one call of `run_shell_command` running $FAKE_WRONG_CMD, or
$FAKE_RIGHT_CMD when the request carries $FAKE_FEEDBACK; one holding the
function's response gets a final text. Other requests (the CLI's own
routing and summaries) get a small JSON text.
"""
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

WRONG_CMD = os.environ.get("FAKE_WRONG_CMD", "true")
RIGHT_CMD = os.environ.get("FAKE_RIGHT_CMD", "true")
FEEDBACK = os.environ.get("FAKE_FEEDBACK", "already failing on the base")
LOG = sys.argv[2] if len(sys.argv) > 2 else os.devnull


def texts(x, out):
    if isinstance(x, str):
        out.append(x)
    elif isinstance(x, list):
        for y in x:
            texts(y, out)
    elif isinstance(x, dict):
        for y in x.values():
            texts(y, out)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(n) or b"{}")
        except ValueError:
            body = {}
        names = [f.get("name") for t in body.get("tools", []) for f in t.get("functionDeclarations", [])]
        contents = body.get("contents", [])
        answered = any("functionResponse" in p for c in contents for p in c.get("parts", []))
        words = []
        texts([c for c in contents if c.get("role") == "user"], words)
        feedback = FEEDBACK in "\n".join(words)
        if "run_shell_command" in names and not answered:
            part = {"functionCall": {"name": "run_shell_command",
                                     "args": {"command": RIGHT_CMD if feedback else WRONG_CMD,
                                              "description": "edit the code"}}}
            kind = "call"
        elif "run_shell_command" in names:
            part, kind = {"text": "I edited calc.py."}, "final"
        else:
            part, kind = {"text": json.dumps({"complexity_reasoning": "a small edit", "complexity_score": 10})}, "other"
        with open(LOG, "a") as f:
            f.write(json.dumps({"path": self.path, "kind": kind, "feedback": feedback}) + "\n")
        reply = {"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
                 "usageMetadata": {"promptTokenCount": 700, "candidatesTokenCount": 30, "totalTokenCount": 730},
                 "modelVersion": "fake"}
        if "streamGenerateContent" in self.path:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(f"data: {json.dumps(reply)}\r\n\r\n".encode())
            self.wfile.flush()
            self.close_connection = True
            return
        data = json.dumps(reply).encode()
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
