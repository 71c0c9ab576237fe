#!/usr/bin/env python3
"""A scripted agent that uses retry-run's self-check MCP server.

    python3 mcp_agent.py STEPS_JSON TRANSCRIPT

Starts the server from $RETRY_RUN_MCP_COMMAND (a JSON array), speaks MCP
to it over stdio (protocol 2025-06-18), and follows STEPS, a JSON list of:

    {"write": [path, text]}          write a file (in the worktree, the cwd, when
                                     relative); a refused write is kept in
                                     the transcript's "write_errors"
    {"call": [tool, arguments]}      call a tool and wait for its answer
    {"repeat": [tool, arguments, n]} call it n times; only the last answer is kept
    {"together": [[tool, args], ...]} send several calls at once, then wait
    {"raw": {...}}                   send a JSON-RPC request as it is

Every answer goes to TRANSCRIPT (JSON), with the server's handshake and its
tool list. Without the variable, it only writes, and TRANSCRIPT says so.
"""
import json
import os
import subprocess
import sys


def main():
    steps = json.loads(sys.argv[1])
    out_path = sys.argv[2]
    transcript = {"env": os.environ.get("RETRY_RUN_MCP_COMMAND"), "answers": []}
    if not transcript["env"]:
        # No server: the writes alone.
        for step in steps:
            if "write" in step:
                with open(step["write"][0], "w") as f:
                    f.write(step["write"][1])
        json.dump(transcript, open(out_path, "w"))
        return 0
    cmd = json.loads(transcript["env"])
    server = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    next_id = [0]

    def send(method, params=None):
        next_id[0] += 1
        msg = {"jsonrpc": "2.0", "id": next_id[0], "method": method}
        if params is not None:
            msg["params"] = params
        server.stdin.write(json.dumps(msg) + "\n")
        server.stdin.flush()
        return next_id[0]

    def wait(ids):
        got = {}
        while len(got) < len(ids):
            line = server.stdout.readline()
            if not line:
                raise SystemExit("the server closed its output")
            msg = json.loads(line)
            if msg.get("id") in ids:
                got[msg["id"]] = msg
        return [got[i] for i in ids]

    init = wait([send("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                     "clientInfo": {"name": "mcp_agent.py", "version": "1"}})])[0]
    transcript["initialize"] = init.get("result")
    server.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
    server.stdin.flush()
    transcript["tools"] = wait([send("tools/list")])[0].get("result")

    def answer(msg):
        if "error" in msg:
            return {"protocol_error": msg["error"]}
        r = msg["result"]
        return {"is_error": r.get("isError", False), "text": "".join(c.get("text", "") for c in r.get("content", []))}

    for step in steps:
        if "write" in step:
            path, text = step["write"]
            try:
                with open(path, "w") as f:
                    f.write(text)
            except OSError as e:
                transcript.setdefault("write_errors", []).append(f"{path}: {e.strerror}")
        elif "call" in step:
            tool, args = step["call"]
            msg = wait([send("tools/call", {"name": tool, "arguments": args})])[0]
            transcript["answers"].append(answer(msg))
        elif "repeat" in step:
            tool, args, n = step["repeat"]
            for _ in range(n):
                msg = wait([send("tools/call", {"name": tool, "arguments": args})])[0]
            transcript["answers"].append(answer(msg))
        elif "together" in step:
            ids = [send("tools/call", {"name": t, "arguments": a}) for t, a in step["together"]]
            transcript["answers"].append([answer(m) for m in wait(ids)])
        elif "raw" in step:
            ids = [send(step["raw"]["method"], step["raw"].get("params"))]
            transcript["answers"].append(answer(wait(ids)[0]))
    server.stdin.close()
    transcript["server_exit"] = server.wait(timeout=30)
    json.dump(transcript, open(out_path, "w"), indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
