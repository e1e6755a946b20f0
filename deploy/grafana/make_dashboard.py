#!/usr/bin/env python3
"""Writes dashboards/jobwire.json, the Grafana dashboard of jobwire (python3 make_dashboard.py).

Edit the panels here, not the JSON: the test `crates/jobwire/tests/observe.rs` checks that
every metric the JSON names is one jobwire exports.
"""
import json
from pathlib import Path

DS = {"type": "prometheus", "uid": "prometheus"}
panels = []
y = 0


def row(title):
    global y
    panels.append({"type": "row", "title": title, "collapsed": False,
                   "gridPos": {"h": 1, "w": 24, "x": 0, "y": y}, "id": len(panels) + 1, "panels": []})
    y += 1


def panel(title, targets, kind="timeseries", unit="short", w=12, x=0, h=8, desc="", stack=False):
    p = {
        "type": kind, "title": title, "description": desc, "datasource": DS,
        "gridPos": {"h": h, "w": w, "x": x, "y": y}, "id": len(panels) + 1,
        "targets": [
            {"refId": chr(65 + i), "datasource": DS, "expr": e, "legendFormat": l,
             **({"format": "heatmap"} if kind == "heatmap" else {})}
            for i, (e, l) in enumerate(targets)
        ],
        "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
        "options": {},
    }
    if kind == "timeseries" and stack:
        p["fieldConfig"]["defaults"]["custom"] = {"stacking": {"mode": "normal"}, "fillOpacity": 30}
    if kind == "heatmap":
        p["options"] = {"calculate": False, "yAxis": {"unit": unit}, "color": {"scheme": "Oranges"}}
    panels.append(p)
    return p


def line(*items):
    """Puts the panels given as (title, targets, kwargs) side by side on one row."""
    global y
    w = 24 // len(items)
    for i, (title, targets, kw) in enumerate(items):
        panel(title, targets, w=w, x=i * w, **kw)
    y += 8


def heat(metric, title, unit="s"):
    return (title, [(f"sum by (le) (rate({metric}_bucket[$__rate_interval]))", "{{le}}")],
            {"kind": "heatmap", "unit": unit})


row("Pipeline flow")
line(
    ("Posts taken in, by outcome", [("sum by (outcome) (rate(jobwire_posts_ingested_total[$__rate_interval]))", "{{outcome}}")], {"unit": "ops", "stack": True}),
    ("Posts classified, by verdict", [("sum by (verdict) (rate(jobwire_classified_total[$__rate_interval]))", "{{verdict}}")], {"unit": "ops", "stack": True}),
    ("Deliveries created and sent", [
        ("sum(rate(jobwire_deliveries_created_total[$__rate_interval]))", "created"),
        ("sum(rate(jobwire_deliveries_total{outcome=\"sent\"}[$__rate_interval]))", "sent"),
    ], {"unit": "ops"}),
)
line(
    ("Queue depths", [("sum by (topic) (jobwire_queue_depth)", "{{topic}}")], {}),
    ("Not ready components", [("jobwire_component_ready == 0", "{{role}} {{component}}")], {"desc": "Empty when every process is ready."}),
)

row("Latency")
line(
    heat("jobwire_end_to_end_latency_seconds", "End to end: post read to card delivered"),
    ("End to end p50 / p99", [
        ("histogram_quantile(0.5, sum by (le) (rate(jobwire_end_to_end_latency_seconds_bucket[$__rate_interval])))", "p50"),
        ("histogram_quantile(0.99, sum by (le) (rate(jobwire_end_to_end_latency_seconds_bucket[$__rate_interval])))", "p99"),
    ], {"unit": "s", "desc": "From the moment jobwire reads a post to Telegram accepting its card, for deliveries not held on purpose."}),
)
line(
    heat("jobwire_send_latency_seconds", "Telegram send (one sendMessage)"),
    heat("jobwire_classify_latency_seconds", "Classification (LLM or local)"),
    heat("jobwire_stage_latency_seconds", "Fan-out of one job"),
)
line(
    ("Send latency p50 / p99", [
        ("histogram_quantile(0.5, sum by (le) (rate(jobwire_send_latency_seconds_bucket[$__rate_interval])))", "p50"),
        ("histogram_quantile(0.99, sum by (le) (rate(jobwire_send_latency_seconds_bucket[$__rate_interval])))", "p99"),
    ], {"unit": "s"}),
    ("Classification latency p50 / p95", [
        ("histogram_quantile(0.5, sum by (le) (rate(jobwire_classify_latency_seconds_bucket[$__rate_interval])))", "p50"),
        ("histogram_quantile(0.95, sum by (le) (rate(jobwire_classify_latency_seconds_bucket[$__rate_interval])))", "p95"),
    ], {"unit": "s"}),
    heat("jobwire_bot_update_duration_seconds", "Bot update handling"),
)

row("LLM")
line(
    ("LLM share of posts", [(
        "sum(rate(jobwire_classify_route_total{route=\"llm\"}[$__rate_interval])) / sum(rate(jobwire_classify_route_total[$__rate_interval]))",
        "share")], {"unit": "percentunit"}),
    ("LLM spend per hour (USD)", [("sum by (model) (increase(jobwire_llm_cost_microusd_total[1h])) / 1e6", "{{model}}")], {"unit": "currencyUSD"}),
    ("LLM tokens", [("sum by (direction) (rate(jobwire_llm_tokens_total[$__rate_interval]))", "{{direction}}")], {}),
)
line(
    ("Spend today vs daily limit (USD)", [
        ("sum(increase(jobwire_llm_cost_microusd_total[1d])) / 1e6", "last 24 h"),
        ("max(jobwire_llm_daily_spend_limit_microusd) / 1e6", "limit"),
    ], {"unit": "currencyUSD"}),
    ("Cost per LLM post (USD)", [(
        "sum(rate(jobwire_llm_post_cost_microusd_sum[$__rate_interval])) / sum(rate(jobwire_llm_post_cost_microusd_count[$__rate_interval])) / 1e6",
        "mean")], {"unit": "currencyUSD"}),
)

row("Telegram")
line(
    ("Deliveries by outcome", [("sum by (outcome) (rate(jobwire_deliveries_total[$__rate_interval]))", "{{outcome}}")], {"unit": "ops", "stack": True}),
    ("Bot API 429 answers", [("sum by (bot) (increase(jobwire_telegram_429_total[$__rate_interval]))", "{{bot}}")], {}),
    ("MTProto flood waits (s)", [("sum by (account) (increase(jobwire_mtproto_flood_wait_seconds_total[$__rate_interval]))", "{{account}}")], {"unit": "s"}),
)
line(
    ("Posts read per channel", [("sum by (channel) (rate(jobwire_mtproto_posts_read_total[$__rate_interval]))", "{{channel}}")], {"unit": "ops"}),
    ("Read lag per account", [("max by (account) (jobwire_mtproto_read_lag_seconds)", "{{account}}")], {"unit": "s"}),
    ("Sessions up, reconnects", [
        ("jobwire_mtproto_session_up", "up {{account}}"),
        ("sum by (account) (increase(jobwire_mtproto_reconnects_total[$__rate_interval]))", "reconnects {{account}}"),
    ], {}),
)
line(
    ("Feed polls", [("sum by (outcome) (increase(jobwire_feed_polls_total[$__rate_interval]))", "{{outcome}}")], {}),
    ("Broadcast sends", [("sum by (outcome) (increase(jobwire_broadcast_sends_total[$__rate_interval]))", "{{outcome}}")], {}),
)

row("Payments and subscribers")
line(
    ("Payments per day", [("sum by (kind, currency) (increase(jobwire_payments_total[1d]))", "{{kind}} {{currency}}")], {}),
    ("Refunds per day", [("sum by (source) (increase(jobwire_refunds_total[1d]))", "{{source}}")], {}),
    ("Active subscribers by plan", [("sum by (plan) (jobwire_active_subscribers)", "{{plan}}")], {"stack": True}),
)
line(
    ("Trials and expiries per day", [
        ("sum(increase(jobwire_trials_total[1d]))", "trials"),
        ("sum by (trial) (increase(jobwire_expiries_total[1d]))", "expired (trial={{trial}})"),
    ], {}),
    ("Reports from subscribers", [("sum by (kind) (increase(jobwire_bot_reports_total[1d]))", "{{kind}}")], {}),
)

dashboard = {
    "uid": "jobwire", "title": "jobwire", "tags": ["jobwire"], "timezone": "utc",
    "schemaVersion": 39, "version": 1, "refresh": "30s", "editable": True,
    "time": {"from": "now-6h", "to": "now"},
    "templating": {"list": []}, "annotations": {"list": []},
    "panels": panels,
}
out = Path(__file__).parent / "dashboards" / "jobwire.json"
out.write_text(json.dumps(dashboard, indent=1, ensure_ascii=False) + "\n")
print(f"{out}: {len(panels)} panels")
