"""An OTLP/HTTP trace and log receiver for the tests: decodes each export with the official
protobuf definitions (PyPI opentelemetry-proto) and prints every span and log record as one JSON
line on stdout.

Usage: otlp_receiver.py  -> prints `listening PORT`, then a line per span received:
{"trace_id", "span_id", "parent_span_id" (hex, "" for a root), "name", "kind" (SERVER, ...),
 "service" (the resource's service.name), "attributes": {key: value}}
and a line per log record: {"signal": "log", "event_name", "severity", "body", "resource",
 "attributes"}
"""

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.trace.v1.trace_pb2 import Span


def value(any_value):
    kind = any_value.WhichOneof("value")
    return getattr(any_value, kind) if kind else None


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        if self.path == "/v1/logs" and self.headers.get("content-type") == "application/x-protobuf":
            self.logs(body)
            return
        if self.path != "/v1/traces" or self.headers.get("content-type") != "application/x-protobuf":
            self.send_response(404)
            self.end_headers()
            return
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        for resource_spans in request.resource_spans:
            resource = {a.key: value(a.value) for a in resource_spans.resource.attributes}
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    print(json.dumps({
                        "trace_id": span.trace_id.hex(),
                        "span_id": span.span_id.hex(),
                        "parent_span_id": span.parent_span_id.hex(),
                        "name": span.name,
                        "kind": Span.SpanKind.Name(span.kind).removeprefix("SPAN_KIND_"),
                        "service": resource.get("service.name"),
                        "attributes": {a.key: value(a.value) for a in span.attributes},
                    }), flush=True)
        answer = ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def logs(self, body):
        request = ExportLogsServiceRequest()
        request.ParseFromString(body)
        for resource_logs in request.resource_logs:
            resource = {a.key: value(a.value) for a in resource_logs.resource.attributes}
            for scope_logs in resource_logs.scope_logs:
                for record in scope_logs.log_records:
                    print(json.dumps({
                        "signal": "log",
                        "event_name": record.event_name,
                        "severity": record.severity_number,
                        "body": value(record.body),
                        "resource": resource,
                        "attributes": {a.key: value(a.value) for a in record.attributes},
                    }), flush=True)
        answer = ExportLogsServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
print(f"listening {server.server_address[1]}", flush=True)
try:
    server.serve_forever()
except KeyboardInterrupt:
    sys.exit(0)
