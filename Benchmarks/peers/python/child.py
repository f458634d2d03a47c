"""Peer child for the Python host: answers each line-delimited JSON-RPC request with an empty result."""
import json
import sys

for line in sys.stdin:
    request = json.loads(line)
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": {}}) + "\n")
    sys.stdout.flush()
