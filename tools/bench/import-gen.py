#!/usr/bin/env python3
"""Writes synthetic exports in each source's own shape for tools/bench/import (issue 35).

    import-gen.py SOURCE RECORDS OUT [SEED]

SOURCE is sentry (JSON Lines of SDK event payloads, 100 breadcrumbs each: RECORDS counts
breadcrumbs), datadog (raw RUM events: views with 3 document versions each, plus actions and
resources) or firebase (BigQuery export rows: a third are screen_view, the rest other events).
Field names and value formats follow the fixtures in Tests/Fixtures/import (see their README).
The navigation itself is a random walk over a vocabulary of screen classes; the fidelity
comparison against a known truth is tools/fidelity/sources.py's job, not this one's.
"""
import json
import random
import sys

if len(sys.argv) not in (4, 5) or sys.argv[1] not in ("sentry", "datadog", "firebase") or not sys.argv[2].isdigit():
    sys.exit("usage: import-gen.py sentry|datadog|firebase RECORDS OUT [SEED]  (RECORDS: a whole number; OUT: the file to write)")
source, records, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rng = random.Random(int(sys.argv[4]) if len(sys.argv) > 4 else 42)
SCREENS = [f"{name}ViewController" for name in (
    "RecipeList RecipeDetail Search Settings Profile Checkout Cart Onboarding Login Home Feed Post Comments "
    "Notifications Messages Chat Map Camera Gallery Player Library Downloads Help About Privacy Account "
    "Billing Orders Order Tracking Store Product Reviews Wishlist Filters Sort Share Compose Draft Inbox "
    "Calendar Event Reminders Tasks Project Team Invite Report Stats Dashboard Widget Subscription").split()]
CONTAINERS = ["UINavigationController", "UITabBarController"]
T0 = 1_714_644_000_000  # ms


def sentry(f):
    written = 0
    event = 0
    while written < records:
        event += 1
        session = f"{rng.getrandbits(128):032X}"
        t = T0 + event * 1000
        crumbs = []
        for _ in range(min(100, records - written)):
            t += rng.randint(200, 8000)
            kind = rng.random()
            iso = f"{t // 1000}.{t % 1000:03d}"
            if kind < 0.15:
                crumbs.append({"timestamp": float(iso), "type": "navigation", "category": "ui.lifecycle", "level": "info",
                               "data": {"screen": rng.choice(CONTAINERS), "beingPresented": "false", "window_isKeyWindow": "true",
                                        "is_window_rootViewController": "true"}})
            elif kind < 0.65:
                crumbs.append({"timestamp": float(iso), "type": "navigation", "category": "ui.lifecycle", "level": "info",
                               "data": {"screen": rng.choice(SCREENS), "title": "Title", "beingPresented": "false",
                                        "parentViewController": "UINavigationController", "window_isKeyWindow": "true",
                                        "is_window_rootViewController": "false"}})
            elif kind < 0.7:
                crumbs.append({"timestamp": float(iso), "type": "navigation", "category": "app.lifecycle", "level": "info",
                               "data": {"state": rng.choice(["background", "foreground", "active", "inactive"])}})
            else:
                crumbs.append({"timestamp": float(iso), "type": "http", "category": "http", "level": "info",
                               "data": {"url": "https://api.example.com/v1/items", "method": "GET", "status_code": 200}})
            written += 1
        f.write(json.dumps({"event_id": f"{rng.getrandbits(128):032x}", "timestamp": t / 1000, "platform": "cocoa",
                            "release": "com.example.app@2.3.1+45", "tags": {"session_id": session},
                            "contexts": {"app": {"app_identifier": "com.example.app", "app_version": "2.3.1"},
                                         "os": {"name": "iOS", "version": "17.4"}, "device": {"model": "iPhone15,2"}},
                            "breadcrumbs": crumbs}, separators=(",", ":")) + "\n")


def datadog(f):
    written = 0
    app = "7c1f8a52-1111-4c2b-9d3e-000000000001"
    while written < records:
        session = f"{rng.getrandbits(32):08x}-2222-4d4e-8f5a-{rng.getrandbits(48):012x}"
        t = T0 + rng.randint(0, 86_400_000)
        for _ in range(rng.randint(10, 60)):
            if written >= records:
                break
            view = f"{rng.getrandbits(32):08x}-0000-4000-8000-{rng.getrandbits(48):012x}"
            name = rng.choice(SCREENS)
            spent = rng.randint(500, 30_000)
            for version in (1, 2, 3):
                if written >= records:
                    break
                last = version == 3
                f.write(json.dumps({"type": "view", "date": t, "application": {"id": app}, "service": "app-ios", "version": "2.3.1",
                                    "session": {"id": session, "type": "user"},
                                    "view": {"id": view, "name": name, "url": name, "time_spent": spent * 1_000_000 * version // 3,
                                             "is_active": not last, "action": {"count": version}, "error": {"count": 0},
                                             "resource": {"count": version}},
                                    "os": {"name": "iOS", "version": "17.4"}, "device": {"type": "mobile", "model": "iPhone15,2"},
                                    "_dd": {"format_version": 2, "document_version": version}}, separators=(",", ":")) + "\n")
                written += 1
                if written < records and rng.random() < 0.5:
                    f.write(json.dumps({"type": rng.choice(["action", "resource"]), "date": t + 100, "application": {"id": app},
                                        "session": {"id": session}, "view": {"id": view, "name": name},
                                        "action": {"type": "tap"}, "_dd": {"format_version": 2}}, separators=(",", ":")) + "\n")
                    written += 1
            t += spent + rng.choice([0, 0, 0, 60_000])


def firebase(f):
    written = 0
    while written < records:
        user = f"{rng.getrandbits(128):032X}"
        session = T0 // 1000 + rng.randint(0, 86_400)
        t = session * 1_000_000
        bundle = 0
        for _ in range(rng.randint(20, 120)):
            if written >= records:
                break
            t += rng.randint(200_000, 8_000_000)
            bundle += 1
            params = [{"key": "ga_session_id", "value": {"int_value": str(session)}}, {"key": "ga_session_number", "value": {"int_value": "3"}}]
            if rng.random() < 0.33:
                name = "screen_view"
                screen = rng.choice(SCREENS)
                params += [{"key": "firebase_screen_class", "value": {"string_value": screen}},
                           {"key": "firebase_screen_id", "value": {"int_value": str(-rng.getrandbits(62))}},
                           {"key": "engagement_time_msec", "value": {"int_value": str(rng.randint(1, 9000))}}]
            else:
                name = rng.choice(["user_engagement", "purchase", "add_to_cart", "select_content", "notification_receive"])
                params += [{"key": "engagement_time_msec", "value": {"int_value": str(rng.randint(1, 9000))}}]
            f.write(json.dumps({"event_date": "20240502", "event_timestamp": str(t), "event_name": name, "event_params": params,
                                "event_bundle_sequence_id": str(bundle), "batch_event_index": "0", "user_pseudo_id": user,
                                "app_info": {"id": "com.example.app", "version": "2.3.1"},
                                "device": {"category": "mobile", "mobile_model_name": "iPhone 14 Pro", "operating_system": "iOS",
                                           "operating_system_version": "iOS 17.4"}, "platform": "IOS"}, separators=(",", ":")) + "\n")
            written += 1


with open(out, "w") as f:
    {"sentry": sentry, "datadog": datadog, "firebase": firebase}[source](f)
