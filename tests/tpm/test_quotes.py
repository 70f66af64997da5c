#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""TPM quotes in the ledger of a real podcapd run, checked with tpm2-tools.

    test_quotes.py PODCAPD PODCAP_KEYGEN PODCAP_VERIFY PODCAP_ATTEST

A swtpm started here is the appliance's TPM; the test plays IMA (it
extends PCR 10 with the ima-ng template hash of podcapd's file and writes
the matching list). podcapd runs between DPDK pcap ports with
appliance.attestation (a quote every 3 windows of 200 ms) and is stopped.
Then: podcap-verify still accepts the log; every ATTEST record commits to
the checkpoint just before it (size = its index, root recomputed here),
its qualifying data is the hash of the verifier key, pod map digest,
build id and that checkpoint (recomputed here), tpm2_checkquote accepts
every quote with the enrolled AK, PCR values and qualifying data, and
refuses it with other qualifying data; PCR 10 is the replay of the IMA
list the record carries. A pod map whose TPM cannot be reached is refused
with exit 2 and the TPM named.
"""
import os
import re
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
from attestlog import (attest, file_sha256, header, ima_ng_line, qualifying, records, root,  # noqa: E402
                       rtype, template_hash)
from daemon import Checks, Podcapd  # noqa: E402
from frames import write_pcap  # noqa: E402
from swtpm import Swtpm, free_ports  # noqa: E402

PODCAPD, KEYGEN, VERIFY, ATTEST = sys.argv[1:5]
ATTEST_T, WINDOW_T = 7, 2
check = Checks()

MAP = """\
window: 200ms
dpdk:
  lcores: 0-1
  memory: 512MiB
  file_prefix: quotes-{pid}
uplinks:
  - name: up0
    pod_port: net_pcap0,rx_pcap={d}/empty.pcap,tx_pcap={d}/to_pod.pcap
    fabric_port: net_pcap1,rx_pcap={d}/empty.pcap,tx_pcap={d}/to_fabric.pcap
pods:
  - id: pod-a
    uplink: up0
"""


def attestation_yaml(tcti, ima, every=3, pcrs="[0, 7, 10]"):
    return (f"  attestation:\n    tpm: {tcti}\n    every: {every}\n    pcrs: {pcrs}\n"
            f"    ima_log: {ima}\n")


def play_ima(tpm, ima_path, files):
    """Measures (sha256, path) entries as IMA would: PCR 10 and the ASCII list."""
    with open(ima_path, "a") as f:
        for sha, path in files:
            r = tpm.tool("tpm2_pcrextend", f"10:sha256={template_hash(sha, path).hex()}")
            assert r.returncode == 0, r.stderr
            f.write(ima_ng_line(sha, path))


def tpms_attest(quote):
    """magic, type, qualifiedSigner, extraData of a marshalled TPMS_ATTEST."""
    magic, typ = struct.unpack(">IH", quote[:6])
    (n,) = struct.unpack(">H", quote[6:8])
    signer = quote[8:8 + n]
    off = 8 + n
    (e,) = struct.unpack(">H", quote[off:off + 2])
    return magic, typ, signer, quote[off + 2:off + 2 + e]


def checkquote(tmp, ak_pem, a, qual):
    for name, data in (("quote.msg", a["quote"]), ("quote.sig", a["sig"]),
                       ("quote.pcrs", b"".join(a["pcrs"][i] for i in sorted(a["pcrs"])))):
        with open(os.path.join(tmp, name), "wb") as f:
            f.write(data)
    sel = "sha256:" + ",".join(str(i) for i in sorted(a["pcrs"]))
    return subprocess.run(["tpm2_checkquote", "-u", ak_pem, "-g", "sha256",
                           "-m", f"{tmp}/quote.msg", "-s", f"{tmp}/quote.sig",
                           "-f", f"{tmp}/quote.pcrs", "-l", sel, "-q", qual.hex()],
                          capture_output=True, text=True, timeout=60)


def replay(lines):
    pcr = bytes(32)
    import hashlib
    for line in lines:
        pcr = hashlib.sha256(pcr + bytes.fromhex(line.split()[1])).digest()
    return pcr


def check_attest_metrics(body):
    """/metrics counts the quotes appended, none failed, and dates the last one."""
    def sample(name):
        m = re.search(r"^" + re.escape(name) + r" (\S+)$", body, re.M)
        return float(m.group(1)) if m else None
    appended = sample('podcap_attest_quotes_total{result="appended"}')
    failed = sample('podcap_attest_quotes_total{result="failed"}')
    last = sample("podcap_attest_last_quote_timestamp_seconds")
    check(appended is not None and appended >= 1 and failed == 0,
          f"/metrics: {appended} quotes appended, {failed} failed")
    check(last is not None and abs(last - time.time()) < 60,
          f"/metrics: the last quote is dated now ({last})")


def run_podcapd(d, tpm, ima, every=3, seconds=3.0):
    pd = Podcapd(PODCAPD, KEYGEN, d, "quotes")
    pd.write_config(pd.appliance_yaml() + attestation_yaml(tpm.tcti, ima, every)
                    + MAP.format(d=d, pid=os.getpid()))
    ok = pd.start()
    check(ok, "podcapd starts with appliance.attestation")
    served = None
    if ok:
        time.sleep(seconds)
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{pd.port()}/v1/attest",
                                        timeout=30) as resp:
                served = resp.read()
            with urllib.request.urlopen(f"http://127.0.0.1:{pd.port()}/metrics",
                                        timeout=30) as resp:
                check_attest_metrics(resp.read().decode())
        except OSError as e:
            check(False, f"GET /v1/attest: {e}")
    check(pd.stop() == 0, "and stops cleanly")
    if served is not None:
        (index,) = struct.unpack(">Q", served[:8])
        recs = records(pd.ledger)
        check(index < len(recs) and served[8:] == recs[index] and rtype(recs[index]) == ATTEST_T,
              f"GET /v1/attest serves an ATTEST record of the ledger (record {index})")
    return pd


def check_quotes(d, pd, tpm, ak_pem, ima):
    recs = records(pd.ledger)
    types = [rtype(r) for r in recs]
    att = [i for i, t in enumerate(types) if t == ATTEST_T]
    windows = types.count(WINDOW_T)
    check(len(att) >= 2 and windows >= 6,
          f"ATTEST records in the ledger: {len(att)} among {windows} windows ({types})")
    check(len(att) <= 2 + windows // 3,
          "no more quotes than one at START, one per 3 windows and one before the STOP")
    check(types[-1] == 5 and types[-2] == ATTEST_T,
          "the last quote comes just before the STOP, none after it")
    check(att and types[0] == 1 and types[1:att[0]].count(1) == 0,
          "the first quote is of the run the START began")
    with open(pd.key + ".pub") as f:
        vk = f.read()
    build = bytes.fromhex(subprocess.run([PODCAPD, "--version"], capture_output=True,
                                         text=True).stdout.split()[-1])
    with open(ima) as f:
        ima_text = f.read()
    for i in att:
        a = attest(recs[i])
        check(a["size"] == i and a["root"] == root(recs, i),
              f"record {i}: the quote commits to the checkpoint of size {i}, the log before it")
        check(a["build"] == build and a["count"] == 0, f"record {i}: podcapd's build id")
        magic, typ, signer, extra = tpms_attest(a["quote"])
        want = qualifying(vk, a["digest"], a["build"], a["size"], a["root"], a["key_kind"])
        check(a["key_kind"] == 0, f"record {i}: signed with a key file")
        check(magic == 0xff544347 and typ == 0x8018 and extra == want,
              f"record {i}: a TPM-generated quote whose qualifying data commits to the log")
        r = checkquote(d, ak_pem, a, want)
        check(r.returncode == 0, f"record {i}: tpm2_checkquote accepts it ({r.stderr.strip()})")
        r = checkquote(d, ak_pem, a, bytes(32))
        check(r.returncode != 0, f"record {i}: tpm2_checkquote refuses other qualifying data")
        check(a["ima"].decode() == ima_text and replay(ima_text.splitlines()) == a["pcrs"][10],
              f"record {i}: the IMA list it carries replays to the quoted PCR 10")
        check(sorted(a["pcrs"]) == [0, 7, 10] and a["alg"] == 0x000b,
              f"record {i}: SHA-256 PCRs 0, 7 and 10, as the pod map asks")
    r = subprocess.run([VERIFY, "--key", pd.key + ".pub", "--ledger", pd.ledger],
                       capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, f"podcap-verify without --attest accepts the log ({r.stdout[-800:]})")
    check(tpm.transient_handles() == "", "podcapd's signer leaves no object in the TPM")
    return recs


def test_unreachable(d):
    pd = Podcapd(PODCAPD, KEYGEN, d, "quotes")
    port = free_ports()
    pd.write_config(pd.appliance_yaml()
                    + attestation_yaml(f"swtpm:host=127.0.0.1,port={port}", "/nonexistent")
                    + MAP.format(d=d, pid=os.getpid()))
    started = pd.start(timeout=30)
    code = pd.stop() if started else pd.proc.wait(timeout=30)
    log = pd.log()
    check(not started and code == 2 and f"port={port}" in log and "TPM" in log,
          f"a TPM that cannot be reached: exit 2 naming it (exit {code}: {log.strip()[-300:]})")


def main():
    with tempfile.TemporaryDirectory(prefix="podcap-quotes-") as tmp:
        write_pcap(f"{tmp}/empty.pcap", [])
        with Swtpm(tmp, "tpm", ek_cert=False) as tpm:
            enrol = os.path.join(tmp, "enrolment.yaml")
            subprocess.run([ATTEST, "enroll", "--tcti", tpm.tcti, "--out", enrol], check=True,
                           capture_output=True)
            with open(enrol) as f:
                ak_pem = os.path.join(tmp, "ak.pem")
                with open(ak_pem, "w") as g:
                    g.write(yaml.safe_load(f)["ak-pem"])
            ima = os.path.join(tmp, "ima.txt")
            play_ima(tpm, ima, [(file_sha256(PODCAPD), "/usr/sbin/podcapd")])
            run = os.path.join(tmp, "run")
            os.mkdir(run)
            write_pcap(f"{run}/empty.pcap", [])
            pd = run_podcapd(run, tpm, ima)
            check_quotes(tmp, pd, tpm, ak_pem, ima)
            if check.failures:
                print(pd.log()[-3000:])
        bad = os.path.join(tmp, "unreachable")
        os.mkdir(bad)
        write_pcap(f"{bad}/empty.pcap", [])
        test_unreachable(bad)
    return check.finish()


if __name__ == "__main__":
    sys.exit(main())
