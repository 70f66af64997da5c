#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""podcap-verify --fleet holds each appliance to the evidence its entry asks for.

Three generated logs (podcap-ledger-gen), each honest. With no trust keys
the fleet verifies. Then each appliance's entry asks for evidence its log
does not carry, and only that appliance fails, for that reason, in its own
report: app-1 a witness (podcap-witness's key) and a quorum passed to the
whole fleet, app-2 a TPM policy (an AK no quote of the log was made with),
app-3 an auditor's declarations and key (no DECLARE in the log) and a tap
(a shaper's log given as a tap: not a tap). A fleet entry's trust paths
are taken from the fleet file's directory, as its other paths. A refused
tap (not a tap's log, or not one its key signed) makes the report's last
line and its JSON say so, as the exit status does. A bad fleet-wide value
is the fleet's usage error: exit 2, said once, no appliance verified.

With podcapd (the fifth argument), two appliances of two sites serve their
endpoints over TLS as tests/integration/test_tls.py does, each with its
own CA, server key and client rule: each entry's ca, pin, cert and
cert_key reach that appliance's verification alone (another site's pin
refuses one appliance, not the other), and replace the fleet-wide --ca,
--pin and --cert with --cert-key, which serve the entries naming none.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon import Checks  # noqa: E402

VERIFY, KEYGEN, LEDGER_GEN, WITNESS = sys.argv[1:5]
PODCAPD = sys.argv[5] if len(sys.argv) > 5 else None
NOW = "2024-01-02T00:00:00Z"

MAP = """\
appliance:
  id: {id}
window: 1s
defaults:
  cap: 1Gbps
  burst: 1s
uplinks:
  - name: up0
    pod_port: 0000:3b:00.0
    fabric_port: 0000:3b:00.1
pods:
  - id: pod-a
    uplink: up0
"""


def ak_pem():
    """A P-256 public key no TPM of these logs holds (python3-cryptography)."""
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives import serialization
    k = ec.generate_private_key(ec.SECP256R1()).public_key()
    return k.public_bytes(serialization.Encoding.PEM,
                          serialization.PublicFormat.SubjectPublicKeyInfo).decode()


def fleet(d, name, extra):
    """A fleet file of app-1..3; extra[i] adds lines to app-i's entry."""
    lines = ["jobs: 2", "appliances:"]
    for i in (1, 2, 3):
        lines += [f"  - name: app-{i}", f"    ledger: log-{i}", f"    key: keys/app-{i}.pub",
                  f"    pod_maps: [app-{i}.yaml]"]
        lines += ["    " + x for x in extra.get(i, [])]
    path = f"{d}/{name}.yaml"
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def run_fleet(path, *opts):
    r = subprocess.run([VERIFY, "--fleet", path, "--now", NOW, "--json", *opts],
                       capture_output=True, text=True, timeout=120)
    try:
        doc = json.loads(r.stdout)
    except ValueError:
        doc = {}
    return r, {a["name"]: a for a in doc.get("appliances", [])}


def failures(app):
    """The record checks' failures and the witness section's, then what it said on stderr
    (warnings left out)."""
    rep = app.get("report") or {}
    rep = rep.get("shaper", rep)  # with taps, the appliance's own report is "shaper"
    out = [f.get("check", "") + ": " + f.get("message", "") for f in rep.get("failures", [])]
    out += ["witness: " + m for m in (rep.get("witnesses") or {}).get("failures", [])]
    return out + [ln for ln in app.get("stderr", "").splitlines() if "warning" not in ln]


TLS_MAP = """\
  tls:
    certificate: {d}/server.crt
    key: {d}/server.key
    client_ca: {d}/ca.crt
  access:
    - client: "CN=verifier-{site},O=Podcap Test Site"
      routes: [log]
window: 1s
dpdk:
  lcores: 0-1
  memory: 512MiB
  file_prefix: fleet-{site}-{pid}
uplinks:
  - name: up0
    pod_port: net_pcap0,rx_pcap={d}/pod.pcap,infinite_rx=1,tx_pcap=/dev/null
    fabric_port: net_pcap1,rx_pcap={d}/empty.pcap,tx_pcap=/dev/null
pods:
  - id: pod-a
    uplink: up0
    prefixes: [10.0.0.0/26]
    cap: 50Mbps
    mode: police
"""


def tls_site(d, site):
    """podcapd of appliance fleet-SITE, its endpoint over TLS with a CA of its own, as
    test_tls.py starts it: (podcapd, its https URL), the URL None when it did not start."""
    from daemon import Podcapd
    from frames import ETH_IPV4, eth, ipv4_packet, write_pcap
    from tlsca import CA
    sd = f"{d}/site-{site}"
    os.makedirs(sd)
    ca = CA(f"{sd}/ca", cn=f"Podcap Test CA {site}")
    ca.issue(f"{sd}/server", "podcapd.test", server=True)
    ca.issue(f"{sd}/verifier", f"verifier-{site}")
    write_pcap(f"{sd}/empty.pcap", [])
    write_pcap(f"{sd}/pod.pcap", [eth(ETH_IPV4, ipv4_packet("10.0.0.1", "10.0.0.200", 1000))] * 8)
    pd = Podcapd(PODCAPD, KEYGEN, sd, f"fleet-{site}")
    pd.write_config(pd.appliance_yaml() + TLS_MAP.format(d=sd, site=site, pid=os.getpid()))
    if not pd.start():
        print(pd.log())
        return pd, None
    return pd, f"https://127.0.0.1:{pd.port()}"


def tls_fleet(d, name, entries):
    """A fleet file of appliances served over TLS: (name, url, extra lines) each."""
    lines = ["appliances:"]
    for app, url, extra in entries:
        lines += [f"  - name: {app}", f"    url: {url}",
                  f"    key: site-{app[-1]}/appliance.key.pub"]
        lines += ["    " + x for x in extra]
    path = f"{d}/{name}.yaml"
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def tls_entry(d, site, pin_site=None):
    """The fleet file's TLS lines of fleet-SITE: its CA, its client certificate and a pin, of
    pin_site's server key (another site's, to refuse it)."""
    from tlsca import spki_sha256
    return [f"ca: site-{site}/ca.crt",
            f"pin: {spki_sha256(f'{d}/site-{pin_site or site}/server.crt')}",
            f"cert: site-{site}/verifier.crt", f"cert_key: site-{site}/verifier.key"]


def run_fleet_live(path, *opts):
    """run_fleet without --now: the appliances' logs are being written now."""
    r = subprocess.run([VERIFY, "--fleet", path, "--json", *opts],
                       capture_output=True, text=True, timeout=120)
    try:
        doc = json.loads(r.stdout)
    except ValueError:
        doc = {}
    return r, {a["name"]: a for a in doc.get("appliances", [])}


def stderr_of(apps):
    return "; ".join(f"{n}: {a.get('status')}: {a.get('stderr', '').strip()[-160:]}"
                     for n, a in apps.items())


def check_tls_fleets(check, d, url_a, url_b):
    both = tls_fleet(d, "tls", [("fleet-a", url_a, tls_entry(d, "a")),
                                ("fleet-b", url_b, tls_entry(d, "b"))])
    r, apps = run_fleet_live(both)
    check(r.returncode == 0 and len(apps) == 2
          and all(a.get("status") == "verified" for a in apps.values()),
          f"each appliance's own CA, pin and client certificate: both verify (exit "
          f"{r.returncode}: {stderr_of(apps)})")
    pinned = tls_fleet(d, "tls-pin", [("fleet-a", url_a, tls_entry(d, "a")),
                                      ("fleet-b", url_b, tls_entry(d, "b", pin_site="a"))])
    r, apps = run_fleet_live(pinned)
    b = apps.get("fleet-b", {})
    check(r.returncode == 1 and apps.get("fleet-a", {}).get("status") == "verified"
          and b.get("status") == "error" and "--pin" in b.get("stderr", ""),
          f"another site's pin refuses that appliance alone (exit {r.returncode}: "
          f"{stderr_of(apps)})")
    wide = tls_fleet(d, "tls-wide", [("fleet-a", url_a, []), ("fleet-b", url_b, tls_entry(d, "b"))])
    r, apps = run_fleet_live(wide)
    a = apps.get("fleet-a", {})
    check(r.returncode == 1 and a.get("status") == "error" and "--ca" in a.get("stderr", "")
          and apps.get("fleet-b", {}).get("status") == "verified",
          f"an entry without TLS and no fleet-wide --ca: its server is refused, the other "
          f"verifies (exit {r.returncode}: {stderr_of(apps)})")
    r, apps = run_fleet_live(wide, "--ca", f"{d}/site-a/ca.crt", "--cert",
                             f"{d}/site-a/verifier.crt", "--cert-key", f"{d}/site-a/verifier.key")
    check(r.returncode == 0 and len(apps) == 2
          and all(a.get("status") == "verified" for a in apps.values()),
          f"the fleet-wide --ca, --cert and --cert-key serve the entry naming none, and the "
          f"other's own replace them (exit {r.returncode}: {stderr_of(apps)})")
    r, apps = run_fleet_live(both, "--cert", f"{d}/site-a/verifier.crt")
    check(r.returncode == 2 and "--cert and --cert-key come together" in r.stderr and not apps,
          f"a fleet-wide --cert without --cert-key: exit 2 ({r.returncode}: {r.stderr.strip()})")


def check_tls(check, d):
    """Two sites' appliances over TLS in one fleet run, each with its entry's TLS."""
    sites = []
    try:
        sites = [tls_site(d, s) for s in ("a", "b")]
        if check(all(url for _, url in sites), "podcapd serves each site's endpoint over TLS"):
            time.sleep(2.5)  # a few windows, and a checkpoint over them, in each ledger
            check_tls_fleets(check, d, sites[0][1], sites[1][1])
    finally:
        for pd, _ in sites:
            pd.stop()


def main():
    check = Checks()
    with tempfile.TemporaryDirectory(prefix="podcap-fleet-") as d:
        os.mkdir(f"{d}/keys", 0o700)
        for i in (1, 2, 3):
            with open(f"{d}/app-{i}.yaml", "w") as f:
                f.write(MAP.format(id=f"app-{i}"))
            subprocess.run([KEYGEN, "--out", f"{d}/keys/app-{i}", "--name", f"podcap/app-{i}"],
                           check=True, stdout=subprocess.DEVNULL)
            subprocess.run([LEDGER_GEN, "--key", f"{d}/keys/app-{i}", "--pod-map",
                            f"{d}/app-{i}.yaml", "--out", f"{d}/log-{i}"], check=True,
                           stdout=subprocess.DEVNULL)
        subprocess.run([KEYGEN, "--out", f"{d}/keys/witness", "--name", "witness.example"],
                       check=True, stdout=subprocess.DEVNULL)
        vkey = subprocess.run([WITNESS, "--key", f"{d}/keys/witness", "--print-key"], check=True,
                              capture_output=True, text=True).stdout.strip()
        with open(f"{d}/keys/witness.vkey", "w") as f:
            f.write(vkey + "\n")
        subprocess.run([KEYGEN, "--out", f"{d}/keys/auditor", "--auditor", "auditor.example"],
                       check=True, stdout=subprocess.DEVNULL)
        os.mkdir(f"{d}/signed")
        with open(f"{d}/signed/app-3.yaml", "w") as f:
            f.write(MAP.format(id="app-3"))
        with open(f"{d}/policy.yaml", "w") as f:
            f.write("attestation-policy: 1\nak-pem: |\n" +
                    "".join("  " + ln + "\n" for ln in ak_pem().splitlines()) +
                    "max-windows: 20\n")

        # a bad fleet-wide value is the fleet's usage error, said once: not every
        # appliance's error in a report that exits 1
        for opt in (["--max-gap", "bogus"], ["--witness-quorum", "0"], ["--build-id", "00"]):
            r = subprocess.run([VERIFY, "--fleet", fleet(d, "plain", {}), "--now", NOW, *opt],
                               capture_output=True, text=True, timeout=120)
            first = (r.stderr.splitlines() or [""])[0]
            check(r.returncode == 2 and r.stdout == "" and first.startswith(f"podcap-verify: {opt[0]}")
                  and "appliance" not in r.stderr,
                  f"--fleet {' '.join(opt)}: exit 2 and the reason once (exit {r.returncode}: "
                  f"{first[:120]})")

        r, apps = run_fleet(fleet(d, "plain", {}))
        why = "; ".join(f"{n}: {a.get('status')}: {a.get('stderr', '')[-200:]}"
                        for n, a in apps.items() if a.get("status") != "verified")
        check(r.returncode == 0 and all(a.get("status") == "verified" for a in apps.values())
              and len(apps) == 3,
              f"the fleet without trust keys verifies (exit {r.returncode}: {r.stderr.strip()} "
              f"{why})")

        path = fleet(d, "trust", {
            1: ["witnesses: [keys/witness.vkey]"],
            2: ["attest: policy.yaml"],
            3: ["declarations: signed", "auditor_keys: [keys/auditor.pub]",
                "taps:", "  - {ledger: log-1, key: keys/app-1.pub}"],
        })
        r, apps = run_fleet(path, "--witness-quorum", "1")
        check(r.returncode == 1, f"a fleet whose evidence is missing exits 1 (exit {r.returncode})")
        for i, want in ((1, "witness"), (2, "attest"), (3, "declaration")):
            a = apps.get(f"app-{i}", {})
            got = failures(a)
            check(a.get("status") == "failed" and any(want in x for x in got),
                  f"app-{i} fails for its {want} evidence alone: {a.get('status')} {got[:3]}")
            check(f"appliance app-{i} failed verification" in r.stderr,
                  f"stderr names app-{i}")
        got3 = " ".join(failures(apps.get("app-3", {})))
        check("not the log of a tap" in got3, f"app-3's tap was read and refused: {got3[-300:]}")
        check(not any("witness" in x for x in failures(apps.get("app-2", {})) +
                      failures(apps.get("app-3", {}))),
              "the witness asked of app-1 is asked of app-1 alone")

        # a shaper's log given as a tap's is refused, not reconciled as "nothing seen"
        r3 = subprocess.run([VERIFY, "--key", f"{d}/keys/app-3.pub", "--ledger", f"{d}/log-3",
                             "--pod-map", f"{d}/app-3.yaml", "--now", NOW,
                             "--tap", f"{d}/log-1", "--tap-key", f"{d}/keys/app-1.pub"],
                            capture_output=True, text=True, timeout=60)
        check(r3.returncode == 1 and "its log has no OBSERVE record: not the log of a tap"
              in r3.stderr, f"--tap with a shaper's log exits 1 naming why (exit {r3.returncode})")
        # the report's last line says what the exit status says: the tap was refused
        for name, key, why in (("a shaper's log", "app-1", "its log has no OBSERVE record"),
                               ("another key's log", "app-2",
                                "its log failed verification with its key")):
            args = [VERIFY, "--key", f"{d}/keys/app-3.pub", "--ledger", f"{d}/log-3",
                    "--pod-map", f"{d}/app-3.yaml", "--now", NOW,
                    "--tap", f"{d}/log-1", "--tap-key", f"{d}/keys/{key}.pub"]
            rt = subprocess.run(args, capture_output=True, text=True, timeout=60)
            last = (rt.stdout.strip().splitlines() or [""])[-1]
            check(rt.returncode == 1 and last.startswith("RECONCILE FAILED: ")
                  and f"tap 1 refused: {why}" in last,
                  f"--tap with {name}: exit {rt.returncode}, the last line says so: {last[:160]}")
            rj = subprocess.run(args + ["--json"], capture_output=True, text=True, timeout=60)
            try:
                doc = json.loads(rj.stdout)
            except ValueError:
                doc = {}
            rec = doc.get("reconciliation", {})
            refused = rec.get("refused", [])
            check(rj.returncode == 1 and doc.get("ok") is False and rec.get("ok") is False
                  and rec.get("refused_total") == 1 and len(refused) == 1
                  and refused[0].get("tap") == 1 and why in refused[0].get("reason", "")
                  and doc.get("result", "").startswith("RECONCILE FAILED: "),
                  f"--tap with {name}, --json: exit {rj.returncode}, ok {doc.get('ok')}, "
                  f"reconciliation ok {rec.get('ok')}, refused {refused}")
        # a shaper's log that fails its own verification fails the reconciliation's verdict too
        rs = subprocess.run([VERIFY, "--key", f"{d}/keys/app-2.pub", "--ledger", f"{d}/log-3",
                             "--now", NOW, "--tap", f"{d}/log-1", "--tap-key",
                             f"{d}/keys/app-1.pub"], capture_output=True, text=True, timeout=60)
        last = (rs.stdout.strip().splitlines() or [""])[-1]
        check(rs.returncode == 1 and last.startswith("RECONCILE FAILED: ")
              and last.endswith("; the shaper's log failed verification (its report above)"),
              f"a shaper's log that does not verify: exit {rs.returncode}, last line {last[-120:]}")

        # the same evidence asked of the whole fleet by hand is what the entry asked for
        r1 = subprocess.run([VERIFY, "--key", f"{d}/keys/app-1.pub", "--ledger", f"{d}/log-1",
                             "--pod-map", f"{d}/app-1.yaml", "--now", NOW, "--json",
                             "--witness", f"{d}/keys/witness.vkey", "--witness-quorum", "1"],
                            capture_output=True, text=True, timeout=60)
        alone = json.loads(r1.stdout).get("failures", []) if r1.stdout else []
        check(r1.returncode == 1 and
              [f.get("check") for f in alone] ==
              [f.get("check") for f in (apps.get("app-1", {}).get("report") or {}).get(
                  "failures", [])],
              "app-1's fleet report has the failures podcap-verify --witness gives alone")
        if PODCAPD:
            check_tls(check, d)
    return check.finish()


if __name__ == "__main__":
    sys.exit(main())
