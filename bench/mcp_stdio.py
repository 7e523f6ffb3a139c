"""One MCP client session over a child process's stdio, by hand
(newline-delimited JSON-RPC, no SDK): what the proxy benchmarks drive
`signpost proxy` and its backends with."""

import json
import subprocess
import sys


class Session:
    """A child process spoken to as an MCP client, initialized."""

    def __init__(self, cmd, env, name="bench", stderr=subprocess.DEVNULL):
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=stderr, env=env)
        self.next_id = 0
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": name, "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message):
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def exchange(self, method, params):
        """The response to one request, whatever it is; None when the
        server closed its output first."""
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            line = self.proc.stdout.readline()
            if not line:
                return None
            message = json.loads(line)
            if message.get("id") == self.next_id:
                return message

    def request(self, method, params):
        """The result of one request; exits with why when there is none."""
        message = self.exchange(method, params)
        if message is None:
            sys.exit(f"{method}: the server closed its output")
        if "error" in message:
            sys.exit(f"{method}: {message['error']}")
        return message["result"]

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=10)
