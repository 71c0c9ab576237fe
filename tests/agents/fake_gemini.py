#!/usr/bin/env python3
"""A fake Gemini API (generateContent, streamGenerateContent) on 127.0.0.1
for the Gemini CLI test.

    python3 fake_gemini.py PORT_FILE LOG_FILE

A main request (one that offers the shell tool) without a function's
response gets one call of `run_shell_command` running $FAKE_WRONG_CMD, or
$FAKE_RIGHT_CMD when the request carries $FAKE_FEEDBACK; one holding the
function's response gets a final text. Other requests (the CLI's own
routing) get the JSON its router expects.

With $FAKE_MCP set, the main loop uses retry-run's self-check tool
(mcp_retry-run_run_checks): a wrong edit, a self-check, the right edit,
another self-check, then a final text; each self-check's answer is logged
as `self_check`.
"""

MCP_TOOL = "mcp_retry-run_run_checks"


def self_checking(contents, names):
    """The next part of the self-checking conversation, and its kind."""
    step = sum(1 for c in contents if c.get("role") == "model" for p in c.get("parts", []) if "functionCall" in p)
    if step in (2, 4):
        log({"self_check": texts(contents[-1]), "tools": names})
    if step in (0, 2):
        cmd = WRONG_CMD if step == 0 else RIGHT_CMD
        return {"functionCall": {"name": "run_shell_command", "args": {"command": cmd, "description": "edit"}}}, "call"
    if step in (1, 3):
        return {"functionCall": {"name": MCP_TOOL, "args": {}}}, "call"
    return {"text": "The self-check passed; done."}, "final"
import json
import os

from fake_common import FEEDBACK, RIGHT_CMD, WRONG_CMD, Base, log, serve, texts


class Handler(Base):
    def do_POST(self):
        body = self.body()
        if self.failing("gemini"):
            return
        names = [f.get("name") for t in body.get("tools", []) for f in t.get("functionDeclarations", [])]
        contents = body.get("contents", [])
        answered = any("functionResponse" in p for c in contents for p in c.get("parts", []))
        feedback = FEEDBACK in texts([c for c in contents if c.get("role") == "user"])
        if os.environ.get("FAKE_MCP") and "run_shell_command" in names:
            part, kind = self_checking(contents, names)
        elif "run_shell_command" in names and not answered:
            cmd = RIGHT_CMD if feedback else WRONG_CMD
            part = {"functionCall": {"name": "run_shell_command", "args": {"command": cmd, "description": "edit the code"}}}
            kind = "call"
        elif "run_shell_command" in names:
            part, kind = {"text": "I edited calc.py."}, "final"
        else:
            part, kind = {"text": json.dumps({"complexity_reasoning": "a small edit", "complexity_score": 10})}, "other"
        log({"path": self.path, "kind": kind, "feedback": feedback})
        reply = {"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
                 "usageMetadata": {"promptTokenCount": 700, "candidatesTokenCount": 30, "totalTokenCount": 730},
                 "modelVersion": "fake"}
        if "streamGenerateContent" in self.path:
            return self.sse([f"data: {json.dumps(reply)}\r\n\r\n"])
        self.json(reply)


if __name__ == "__main__":
    serve(Handler)
