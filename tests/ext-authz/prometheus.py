"""A real Prometheus server (Debian's `prometheus`) on 127.0.0.1, started
and stopped by the test, scraping one ext_authz service's /metrics every
second; `verdicts()` asks its query API for `toolctx_verdicts_total`."""

import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request

from authz import harness

PROMETHEUS = os.environ.get("PROMETHEUS") or shutil.which("prometheus") or "/usr/bin/prometheus"


class Prometheus:
    def __init__(self, target_ports, rules=()):
        if isinstance(target_ports, int):
            target_ports = [target_ports]
        self.port = harness.free_ports(1)[0]
        self.dir = tempfile.mkdtemp(prefix="toolctx-prometheus-")
        config = os.path.join(self.dir, "prometheus.yml")
        with open(config, "w") as f:
            # evaluation_interval: recording rules run every second (the default is a minute).
            f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n"
                    "scrape_configs:\n  - job_name: toolctx\n    static_configs:\n"
                    "      - targets: [%s]\n" % ", ".join("'127.0.0.1:%d'" % p for p in target_ports))
            if rules:
                f.write("rule_files:\n" + "".join("  - '%s'\n" % r for r in rules))
        self.log = open(os.path.join(self.dir, "prometheus.log"), "w")
        self.proc = harness.start([PROMETHEUS, "--config.file=" + config,
                                   "--storage.tsdb.path=" + os.path.join(self.dir, "data"),
                                   "--web.listen-address=127.0.0.1:%d" % self.port],
                                  stdout=self.log, stderr=subprocess.STDOUT)

    def query(self, promql):
        url = "http://127.0.0.1:%d/api/v1/query?%s" % (self.port, urllib.parse.urlencode({"query": promql}))
        with urllib.request.urlopen(url, timeout=5) as r:
            answer = json.load(r)
        if answer.get("status") != "success":
            raise RuntimeError(answer)
        return answer["data"]["result"]

    def verdicts(self, source=""):
        """`toolctx_verdicts_total` as {"outcome" or "reject/<reason>": value}, zeros left out:
        as scraped, or as recorded by the rules of `source`."""
        out = {}
        # Summed over every service scraped.
        for series in self.query('sum by (outcome, reason) (toolctx_verdicts_total{source="%s"})' % source):
            labels, value = series["metric"], int(float(series["value"][1]))
            key = labels["outcome"] if "reason" not in labels else "reject/" + labels["reason"]
            if value:
                out[key] = value
        return out

    def wait_for(self, want, source="", timeout=30):
        """The verdicts once Prometheus has `want` (or the last seen at the deadline)."""
        deadline, seen = time.time() + timeout, None
        while time.time() < deadline:
            try:
                seen = self.verdicts(source)
            except OSError:
                seen = None
            if seen == want:
                break
            time.sleep(0.25)
        return seen

    def stop(self):
        harness.stop(self.proc)
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)
