"""What the fake model servers share: the text of a request, JSON and SSE
replies, a request log, and serving on a free port of 127.0.0.1 (written to
the port file given on the command line, the log file after it)."""
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

FEEDBACK = os.environ.get("FAKE_FEEDBACK", "already failing on the base")
WRONG_CMD = os.environ.get("FAKE_WRONG_CMD", "true")
RIGHT_CMD = os.environ.get("FAKE_RIGHT_CMD", "true")
LOG = sys.argv[2] if len(sys.argv) > 2 else os.devnull


def texts(x, out=None):
    """Every string inside `x` (messages, parts, contents), joined by lines."""
    out = [] if out is None else out
    if isinstance(x, str):
        out.append(x)
    elif isinstance(x, list):
        for y in x:
            texts(y, out)
    elif isinstance(x, dict):
        for y in x.values():
            texts(y, out)
    return "\n".join(out)


def log(entry):
    with open(LOG, "a") as f:
        f.write(json.dumps(entry) + "\n")


class Base(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        try:
            return json.loads(self.rfile.read(n) or b"{}")
        except ValueError:
            return {}

    def json(self, obj):
        data = json.dumps(obj).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def sse(self, chunks):
        """A server-sent event stream of ready-made `event:`/`data:` chunks."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        for c in chunks:
            self.wfile.write(c.encode())
        self.wfile.flush()
        self.close_connection = True


def serve(handler):
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    with open(sys.argv[1] + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    server.serve_forever()
