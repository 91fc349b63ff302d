"""Figures of a bottleneck run from the sender's per-second statistics (`--stats-json`, one JSON
line a second) and the relay's statistics towards the receiver: when the sender went under the
1 Mbit/s cap, its rate and target each second, and the loss and queueing delay at the cap."""
import json

CAP_KBPS = 1000
TARGET = ("under the cap within 3 s; then bottleneck loss < 2 %, queueing delay < 150 ms, no freeze > 500 ms "
          "(loss and delay here are over the whole run, start included)")


def bottleneck_figures(tx_jsonl, down):
    with open(tx_jsonl) as f:
        lines = [json.loads(line) for line in f if line.strip()]
    under = next((l["t"] for l in lines
                  if l.get("kbps", 1e9) < CAP_KBPS and l.get("target_kbps", 1e9) < CAP_KBPS), None)
    dropped, fwd = down.get("tail_dropped") or 0, down.get("forwarded") or 0
    return {"under_cap_at_s": under,
            "sent_kbps_per_second": [l.get("kbps") for l in lines],
            "target_kbps_per_second": [l.get("target_kbps") for l in lines],
            "bottleneck_tail_dropped": dropped, "bottleneck_forwarded": fwd,
            "bottleneck_loss_pct": round(100.0 * dropped / max(1, dropped + fwd), 2),
            "queue_delay_ms": {k: down.get(k) for k in ("queue_delay_p50_ms", "queue_delay_p99_ms",
                                                        "queue_delay_max_ms")},
            "target": TARGET}
