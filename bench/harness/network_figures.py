"""Figures of a bottleneck run from the sender's per-second statistics (`--stats-json`, one JSON
line a second) and the relay's statistics towards the receiver: when the sender went under the
1 Mbit/s cap, its rate and target each second, and the loss and queueing delay at the cap — over
the whole run, and over what came after the first seconds (`rtcshare-relay --settle 3`, given by
bench/run-network.sh), which is what the target speaks of."""
import json

CAP_KBPS = 1000
TARGET = ("under the cap within 3 s; after 3 s bottleneck loss < 2 %, queueing delay p99 < 150 ms, "
          "no freeze > 500 ms")


def loss_and_delay(figures):
    dropped, fwd = figures.get("tail_dropped") or 0, figures.get("forwarded") or 0
    return {"tail_dropped": dropped, "forwarded": fwd,
            "loss_pct": round(100.0 * dropped / max(1, dropped + fwd), 2),
            "queue_delay_ms": {k: figures.get(k) for k in ("queue_delay_p50_ms", "queue_delay_p99_ms",
                                                           "queue_delay_max_ms")}}


def converged(figures):
    """Under the cap within 3 s, and loss and queueing delay after the settling time within the
    target (False without them); the freeze is judged by the caller, which knows its receiver."""
    after = figures.get("after_settle")
    return (figures["under_cap_at_s"] is not None and figures["under_cap_at_s"] <= 3
            and after is not None and after["loss_pct"] < 2
            and (after["queue_delay_ms"]["queue_delay_p99_ms"] or 0) < 150)


def bottleneck_figures(tx_jsonl, down):
    with open(tx_jsonl) as f:
        lines = [json.loads(line) for line in f if line.strip()]
    under = next((l["t"] for l in lines
                  if l.get("kbps", 1e9) < CAP_KBPS and l.get("target_kbps", 1e9) < CAP_KBPS), None)
    whole = loss_and_delay(down)
    return {"under_cap_at_s": under,
            "sent_kbps_per_second": [l.get("kbps") for l in lines],
            "target_kbps_per_second": [l.get("target_kbps") for l in lines],
            "bottleneck_tail_dropped": whole["tail_dropped"], "bottleneck_forwarded": whole["forwarded"],
            "bottleneck_loss_pct": whole["loss_pct"], "queue_delay_ms": whole["queue_delay_ms"],
            "after_settle": ({"after_s": down.get("settled_after_s"), **loss_and_delay(down["settled"])}
                             if "settled" in down else None),
            "target": TARGET}
