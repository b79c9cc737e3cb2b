#!/usr/bin/env python3
"""Recording-profile corpora for navlog's fidelity check (issue "Right on real recordings").

Writes sessions of one small app (a tab bar of three navigation stacks, sheets, full-screen
modals wrapped in their own navigation controller, an embedded child, swipe-backs) the way
each kind of recorder records them, with the labels an independent oracle needs:

  events.jsonl   the event lines, all sessions interleaved in time order (as navlogd stores them)
  labels.jsonl   one line per session: its profile, the misuses seeded in it
                 ({"code": "A8", "seq": 41}), and the screen views a user saw in it under
                 rule E3/F1/F4, in order, each with the transition into it and its
                 foreground dwell in µs ("how:from>to/dwell, …": per screen views and
                 dwell are their sums)

This generator does not use navlog's replay engine or simulator: the UIKit model below is
its own (about 300 lines), written from UIKit's documented behaviour, and the labels come from
what each scenario does on purpose. tools/fidelity/run replays the corpus with navlog and
compares.

Profiles (what each recorder is known to hook; see docs/anomalies.md "Recording profiles"):
  full        every callback: will/did appear and disappear, transition begin/end from the
              transition coordinator, containment calls, intents (`show`) confirmed by the
              operation's `cause`.
  didOnly     viewDidAppear / viewDidDisappear only, no transitions, no containment (Datadog
              RUM's UIKit view tracking starts a view in viewDidAppear and stops it in
              viewDidDisappear), plus navigation calls.
  willDid     will and did of appear and disappear, no transition events (the "will and did"
              tracker of workload.md), plus navigation calls.
  appearOnly  viewWillAppear / viewDidAppear only (Sentry's UIViewController performance
              tracking swizzles the appear and load methods, not the disappear ones), plus
              navigation calls.
  navOnly     navigation calls only (push, pop, present, dismiss, tab, segues): a
              hand-instrumented app.
  mix         each session one of the above, chosen at random.

Every profile records the navigation calls an app makes. An interactive swipe-back or sheet
swipe-down makes UIKit call `popViewController` / `dismiss` when the gesture begins, cancelled or
not: every recorder that hooks UIKit's methods (full, didOnly, willDid, appearOnly) records that
call, and only `full` records the transition that says it was cancelled (E6: the others show it
by the removed controller appearing again). navOnly records it too (a recorder of navigation
calls hooks `popViewController` / `dismiss`, whoever calls them: shared/workload.md), and nothing
after it says the gesture was cancelled but what the user does next (E7).
Containers (the tab bar, the navigation controllers) get no appearance callbacks in any
profile: RUM SDKs leave out UIKit's own classes.

Deterministic for a seed. Usage:
  corpus.py --out DIR [--sessions N] [--profile NAME|all] [--misuse-rate R] [--seed S]
"""

import argparse
import json
import math
import os
import random

PROFILES = ["full", "didOnly", "willDid", "appearOnly", "navOnly"]
PUSH = 350_000  # UIKit's push/pop animation (E2)
MODAL = 500_000  # a modal presentation or dismissal

TAB_ROOTS = ["FeedViewController", "SearchViewController", "ProfileViewController"]
DETAILS = [
    "PostDetailViewController", "CommentsViewController", "UserViewController", "PhotoViewerViewController",
    "ResultsViewController", "TagViewController", "SettingsViewController", "FollowersViewController",
]
SHEETS = ["ShareSheetViewController", "FilterSheetViewController"]
MODALS = ["EditProfileViewController", "ComposeViewController", "LoginViewController"]
HEADER = "ProfileHeaderViewController"  # embedded in ProfileViewController (a container view)

# What each profile records.
RECORDS = {
    "full": dict(will=True, did=True, disappear=True, transitions=True, containment=True, intents=True),
    "didOnly": dict(will=False, did=True, disappear=True, transitions=False, containment=False, intents=False),
    "willDid": dict(will=True, did=True, disappear=True, transitions=False, containment=False, intents=False),
    "appearOnly": dict(will=True, did=True, disappear=False, transitions=False, containment=False, intents=False),
    "navOnly": dict(will=False, did=False, disappear=False, transitions=False, containment=False, intents=False),
}

# Seeded misuses, each performed the same way in every profile (the app makes the same calls).
# Whether a session's labels list it is decided where it is seeded (Session.seed): only when the
# profile records the evidence (docs/anomalies.md).
MISUSES = {
    "A1": "present from a popped controller",
    "A2": "present while the presenter already presents",
    "A5": "dismiss with nothing presented",
    "A6": "push the top controller again",
    "A8": "a second push 0.1 s into an animated push",
    "A9": "pop a stack of one",
    "A10": "popTo a controller not in the stack",
    "A11": "removeFromParent with no willMove(toParent: nil)",
    "A12": "unwind that no controller implements",
    "A13": "a custom segue that swaps views, then the destination appears",
    "A14": "a screen's appear callbacks sent twice",
    "A14w": "will-disappear then will-appear with no did between, outside any transition",
}


class Session:
    def __init__(self, rng, sid, profile, start):
        self.rng = rng
        self.id = sid
        self.profile = profile
        self.rec = RECORDS[profile]
        self.t = start
        self.seq = 0
        self.lines = []
        self.addresses = set()
        self.misuses = []
        self.cancelled_gestures = 0  # swipes and swipe-downs begun and cancelled (E6, E7)
        self.cancelled_gesture_seqs = []  # the seq of each one's pop or dismissal
        # The views in order, each as the transitions table and screen_visits give it:
        # "how:from>to/dwell" (from: the view before it, '' for the first; dwell in µs).
        self.path = []
        self.focus_how = None  # how the focus reached the current screen
        self.view_dwell = 0  # the current view's foreground dwell so far
        self.last_view = ""  # the screen of the last view counted (E3)
        self.focus = None  # (vc id, class) the user sees (F1), None when none
        self.focus_since = None
        self.focus_view_counted = False
        self.foreground = True
        self.classes = {}
        # the app's state
        self.tabs = []  # [(nav id, [vc ids])]
        self.selected = 0
        self.presented = []  # [(vc id, style, nav id or None, [stack])] a chain of presentations
        self.popped = []
        self.header = {}  # profile vc id -> header child id
        self.transition = 0
        self.recorded_did_disappear = False

    # --- identifiers and lines -------------------------------------------------------------
    def new_id(self, cls):
        while True:
            address = "0x6000%06x" % self.rng.randrange(1 << 24)
            if address not in self.addresses:
                self.addresses.add(address)
                self.classes[address] = cls
                return address

    def ref(self, vc, first=False):
        return {"id": vc, "class": self.classes[vc]} if first else vc

    def emit(self, type_, **fields):
        if type_ == "vc.disappear" and fields.get("phase") == "did":
            self.recorded_did_disappear = True
        self.seq += 1
        event = {"type": type_, "session": self.id, "seq": self.seq, "ts": self.t}
        event.update(fields)
        self.lines.append((self.t, self.seq, json.dumps(event, separators=(",", ":"))))
        return self.seq

    def advance(self, microseconds):
        self.t += int(microseconds)

    # --- what the user sees (F1, F4, E3), tracked by this model ------------------------------
    def top(self):
        if self.presented:
            return self.presented[-1][3][-1] if self.presented[-1][3] else self.presented[-1][0]
        stack = self.tabs[self.selected][1]
        return stack[-1] if stack else None

    def refocus(self, how):
        now = self.top()
        if now == self.focus:
            return
        self.dwell(self.t)
        self.close_focus()
        self.focus = now
        self.focus_since = self.t
        self.focus_how = how

    def close_focus(self):
        if self.focus is None:
            return
        # E3: a focus replaced at the instant it began is no view.
        if self.t > self.focus_since or self.final:
            screen = self.classes[self.focus]
            self.path.append("%s:%s>%s/%d" % (self.focus_how, self.last_view, screen, self.view_dwell))
            self.last_view = screen
        self.view_dwell = 0
        self.focus = None

    def dwell(self, until):
        if self.focus is not None and self.foreground:
            self.view_dwell += until - self.dwell_mark
        self.dwell_mark = until

    # --- callbacks per profile ---------------------------------------------------------------
    def appear(self, vc, phase):
        if phase == "will" and not self.rec["will"] or phase == "did" and not self.rec["did"]:
            return
        self.emit("vc.appear", vc=vc, phase=phase, animated=True)
        for child in self.children(vc):
            self.emit("vc.appear", vc=child, phase=phase, animated=True)

    def disappear(self, vc, phase):
        if not self.rec["disappear"] or phase == "will" and not self.rec["will"] or phase == "did" and not self.rec["did"]:
            return
        self.emit("vc.disappear", vc=vc, phase=phase, animated=True)
        for child in self.children(vc):
            self.emit("vc.disappear", vc=child, phase=phase, animated=True)

    def children(self, vc):
        return [self.header[vc]] if vc in self.header else []

    def begin_transition(self, interactive=False):
        if not self.rec["transitions"]:
            return None
        self.transition += 1
        name = "t%d" % self.transition
        self.emit("transition.begin", id=name, interactive=interactive)
        return name

    def end_transition(self, name, completed=True):
        if name is not None:
            self.emit("transition.end", id=name, completed=completed)

    # --- the app's actions ------------------------------------------------------------------
    def launch(self):
        self.emit("session.start", app="Photos", version="3.%d" % self.rng.randrange(3), build="1", os="iOS 18.1",
                  device="iPhone15,2", idiom="phone", traits={"h": "compact", "v": "regular"})
        self.dwell_mark = self.t
        self.final = False
        tab = self.new_id("UITabBarController")
        # E3: the hierarchy is built at launch by several events at one timestamp.
        self.emit("window.root", vc=self.ref(tab, True))
        navs = [self.new_id("UINavigationController") for _ in TAB_ROOTS]
        self.emit("tab.set", tab=tab, vcs=[self.ref(n, True) for n in navs], selected=0)
        self.tabs = [(n, []) for n in navs]
        for n, cls in zip(navs, TAB_ROOTS):
            root = self.new_id(cls)
            self.emit("nav.push", nav=n, vc=self.ref(root, True), animated=False)
            self.tabs[navs.index(n)][1].append(root)
            if cls == "ProfileViewController":
                self.embed_header(root)
        self.refocus("root")
        first = self.top()
        self.appear(first, "will")
        self.advance(300_000)
        self.appear(first, "did")

    def embed_header(self, parent):
        child = self.new_id(HEADER)
        self.header[parent] = child
        if self.rec["containment"]:
            self.emit("child.add", parent=parent, vc=self.ref(child, True), slot="header")
            self.emit("child.didMove", vc=child, parent=parent)

    def nav(self):
        if self.presented:
            return self.presented[-1][2]
        return self.tabs[self.selected][0]

    def stack(self):
        if self.presented:
            return self.presented[-1][3]
        return self.tabs[self.selected][1]

    def push(self, cls=None, animated=True):
        nav, stack = self.nav(), self.stack()
        if nav is None:
            return False
        cls = cls or self.rng.choice(DETAILS)
        vc = self.new_id(cls)
        old = stack[-1]
        if self.rec["intents"]:
            intent = self.emit("show", **{"from": old}, vc=self.ref(vc, True))
            self.emit("nav.push", nav=nav, vc=vc, animated=animated, cause=intent)
        else:
            self.emit("nav.push", nav=nav, vc=self.ref(vc, True), animated=animated)
        stack.append(vc)
        if cls == "ProfileViewController":
            self.embed_header(vc)
        self.refocus("push")
        name = self.begin_transition() if animated else None
        self.disappear(old, "will")
        self.appear(vc, "will")
        self.advance(PUSH if animated else 1_000)
        self.disappear(old, "did")
        self.appear(vc, "did")
        self.end_transition(name)
        return True

    def pop(self, animated=True):
        nav, stack = self.nav(), self.stack()
        if nav is None or len(stack) < 2:
            return False
        old = stack.pop()
        self.popped.append(old)
        self.emit("nav.pop", nav=nav, animated=animated)
        self.refocus("pop")
        name = self.begin_transition() if animated else None
        self.disappear(old, "will")
        self.appear(stack[-1], "will")
        self.advance(PUSH if animated else 1_000)
        self.disappear(old, "did")
        self.appear(stack[-1], "did")
        self.end_transition(name)
        return True

    def present(self, kind):
        source = self.top()
        if kind == "sheet":
            vc = self.new_id(self.rng.choice(SHEETS))
            self.emit("present", **{"from": source}, vc=self.ref(vc, True), style="pageSheet", animated=True)
            self.presented.append((vc, "pageSheet", None, []))
            shown = vc
        else:
            nav = self.new_id("UINavigationController")
            root = self.new_id(self.rng.choice(MODALS))
            if self.rng.random() < 0.5:
                # The navigation controller made with its root first, then presented.
                self.emit("nav.set", nav=self.ref(nav, True), vcs=[self.ref(root, True)])
                self.emit("present", **{"from": source}, vc=nav, style="fullScreen", animated=True)
            else:
                # Presented empty, its root pushed at the same instant (E3: one view, one transition).
                self.emit("present", **{"from": source}, vc=self.ref(nav, True), style="fullScreen", animated=True)
                self.emit("nav.push", nav=nav, vc=self.ref(root, True), animated=False)
            self.presented.append((nav, "fullScreen", nav, [root]))
            shown = root
        self.refocus("present")
        name = self.begin_transition()
        covers = kind != "sheet"  # a page sheet leaves its presenter on screen: no callbacks for it
        if covers:
            self.disappear(source, "will")
        self.appear(shown, "will")
        self.advance(MODAL)
        if covers:
            self.disappear(source, "did")
        self.appear(shown, "did")
        self.end_transition(name)
        return True

    def dismiss(self):
        if not self.presented:
            return False
        vc, style, nav, stack = self.presented[-1]
        shown = stack[-1] if stack else vc
        self.emit("dismiss", vc=shown, animated=True)
        self.presented.pop()
        self.refocus("dismiss")
        name = self.begin_transition()
        uncovers = style != "pageSheet"
        self.disappear(shown, "will")
        if uncovers:
            self.appear(self.top(), "will")
        self.advance(MODAL)
        self.disappear(shown, "did")
        if uncovers:
            self.appear(self.top(), "did")
        self.end_transition(name)
        return True

    def select_tab(self, index=None):
        if self.presented:
            return False
        if index is None:
            index = self.rng.choice([i for i in range(len(self.tabs)) if i != self.selected])
        if index == self.selected:
            return False
        old = self.top()
        tab_bar = next(iter(self.classes))  # the first controller made is the tab bar
        self.emit("tab.select", tab=tab_bar, index=index, byUser=True)
        self.selected = index
        self.refocus("tab")
        self.disappear(old, "will")
        self.appear(self.top(), "will")
        self.advance(1_000)
        self.disappear(old, "did")
        self.appear(self.top(), "did")
        return True

    def cancelled_swipe_back(self):
        """R19/E5: an edge swipe that begins a pop and is cancelled."""
        nav, stack = self.nav(), self.stack()
        if nav is None or len(stack) < 2:
            return False
        top, below = stack[-1], stack[-2]
        self.cancelled_gestures += 1
        name = None
        if self.rec["transitions"]:
            name = self.begin_transition(interactive=True)
        self.cancelled_gesture_seqs.append(self.emit("nav.pop", nav=nav, animated=True))
        self.disappear(top, "will")
        self.appear(below, "will")
        self.advance(self.rng.randrange(200_000, 900_000))
        if self.rng.random() < 0.5:
            self.end_transition(name, completed=False)
            name = None
        self.disappear(below, "will")
        self.disappear(below, "did")
        self.appear(top, "will")
        self.appear(top, "did")
        self.end_transition(name, completed=False)
        return True

    def cancelled_sheet_dismissal(self):
        if not self.presented or self.presented[-1][1] != "pageSheet":
            return False
        sheet = self.presented[-1][0]
        self.cancelled_gestures += 1
        name = None
        if self.rec["transitions"]:
            name = self.begin_transition(interactive=True)
        self.cancelled_gesture_seqs.append(self.emit("dismiss", vc=sheet, animated=True))
        self.disappear(sheet, "will")
        self.advance(self.rng.randrange(200_000, 700_000))
        self.appear(sheet, "will")
        self.appear(sheet, "did")
        self.end_transition(name, completed=False)
        return True

    def background(self):
        self.emit("app.background")
        self.dwell(self.t)
        self.foreground = False
        self.advance(lognormal(self.rng, 30_000_000))
        self.dwell_mark = self.t
        self.emit("app.foreground")
        self.foreground = True

    def pop_to_root(self):
        nav, stack = self.nav(), self.stack()
        if nav is None or len(stack) < 2:
            return False
        old = stack[-1]
        self.popped.extend(stack[1:])
        del stack[1:]
        self.emit("nav.popToRoot", nav=nav)
        self.refocus("pop")
        self.disappear(old, "will")
        self.appear(stack[0], "will")
        self.advance(1_000)
        self.disappear(old, "did")
        self.appear(stack[0], "did")
        return True

    # --- misuse, each on purpose, with the seq that shows it --------------------------------
    def prepare(self, code):
        """Ordinary navigation that brings the app where misuse `code` can happen."""
        if code in ("A1", "A2", "A5", "A6", "A8", "A9", "A10", "A11", "A14", "A14w"):
            while self.presented:
                self.dismiss()
                self.advance(lognormal(self.rng, 2_000_000))
        if code == "A6" and self.push():
            # Pushed again below, a controller just pushed: one a cancelled swipe-back began to
            # pop may have been popped for all a navigation-only recorder shows (E7), and pushing
            # it again is then no misuse (in every profile alike: the same navigation for each).
            self.advance(lognormal(self.rng, 3_000_000))
        if code in ("A1", "A10"):
            # Navigation calls alone prove a controller gone only when no gesture could have
            # begun its removal (E7: an animated pop may have been a cancelled swipe), so the
            # misuse is seeded on one popped without animation (in every profile alike, so that
            # each recorder records the same navigation).
            self.push()
            self.advance(lognormal(self.rng, 3_000_000))
            self.pop(animated=False)
            self.advance(lognormal(self.rng, 3_000_000))
        if code in ("A9", "A11", "A14", "A14w") and self.pop_to_root():
            self.advance(lognormal(self.rng, 2_000_000))
        profile_tab = TAB_ROOTS.index("ProfileViewController")
        if code in ("A9", "A14w") and self.selected == profile_tab or code == "A11" and self.selected != profile_tab:
            self.select_tab(profile_tab if code == "A11" else 0)
            self.advance(lognormal(self.rng, 2_000_000))
            self.pop_to_root()
        if code == "A14":
            # Another tab, not the profile's, at its root: popped there while not on screen.
            other = next(i for i in range(len(self.tabs)) if i not in (self.selected, profile_tab))
            nav, stack = self.tabs[other]
            if len(stack) > 1:
                self.popped.extend(stack[1:])
                del stack[1:]
                self.emit("nav.popToRoot", nav=nav)
            self.advance(lognormal(self.rng, 2_000_000))

    def seed(self, code):
        rng = self.rng
        if code == "A8":
            nav, stack = self.nav(), self.stack()
            if nav is None:
                return False
            first, second = self.new_id(rng.choice(DETAILS)), self.new_id(rng.choice(DETAILS))
            old = stack[-1]
            self.emit("nav.push", nav=nav, vc=self.ref(first, True), animated=True)
            stack.append(first)
            self.refocus("push")
            name = self.begin_transition()
            self.advance(100_000)
            seq = self.emit("nav.push", nav=nav, vc=self.ref(second, True), animated=rng.random() < 0.5)
            stack.append(second)
            self.refocus("push")
            self.disappear(old, "will")
            self.appear(second, "will")
            self.advance(PUSH)
            self.disappear(old, "did")
            self.appear(second, "did")
            self.end_transition(name)
        elif code == "A14":
            # A container that forwards appearance twice: a tap on another tab whose root (a
            # stack of one, nothing presented: no interactive transition could cover it) gets
            # its appear callbacks, then the whole appear sequence again at once.
            targets = [i for i, (_, stack) in enumerate(self.tabs)
                       if i != self.selected and len(stack) == 1 and stack[0] not in self.header]
            if self.presented or not targets:
                return False
            old = self.top()
            self.emit("tab.select", tab=next(iter(self.classes)), index=targets[0], byUser=True)
            self.selected = targets[0]
            self.refocus("tab")
            vc = self.top()
            self.disappear(old, "will")
            self.appear(vc, "will")
            self.disappear(old, "did")
            self.appear(vc, "did")
            seq = self.seq + 1 if self.rec["will"] or self.rec["did"] else None
            self.appear(vc, "will")
            self.appear(vc, "did")
        elif code == "A14w":
            # beginAppearanceTransition(false) then (true) with no end between, outside any
            # transition, on a root screen; after a trip to the background (so that neither a
            # cancelled transition's rollback nor "nothing happened since" can explain it).
            if self.presented or len(self.stack()) != 1 or self.top() in self.header:
                return False
            self.background()
            self.advance(lognormal(rng, 2_000_000))
            vc = self.top()
            had_did_disappear = self.recorded_did_disappear
            self.disappear(vc, "will")
            first = self.seq + 1
            self.appear(vc, "will")
            self.appear(vc, "did")
            if self.profile == "full":
                seq = first  # R20: the will-disappear had no did; the session records transitions, none was running
            elif self.profile == "didOnly" and had_did_disappear:
                seq = first  # E1: a second did-appear with no did-disappear between, in a session that records them
            else:
                seq = None  # will+did without transitions: a cancelled swipe could explain it (E5); appear-only, nav-only: nothing shows it
        elif code == "A1":
            if not self.popped:
                return False
            seq = self.emit("present", **{"from": self.popped[-1]}, vc=self.ref(self.new_id(rng.choice(SHEETS)), True), style="pageSheet")
        elif code == "A2":
            if self.presented:
                return False
            source = self.top()
            self.present("sheet")
            self.advance(lognormal(rng, 3_000_000))
            seq = self.emit("present", **{"from": source}, vc=self.ref(self.new_id(rng.choice(SHEETS)), True), style="pageSheet")
        elif code == "A5":
            if self.presented:
                return False
            seq = self.emit("dismiss", vc=self.top(), animated=True)
        elif code == "A6":
            nav, stack = self.nav(), self.stack()
            if nav is None:
                return False
            seq = self.emit("nav.push", nav=nav, vc=stack[-1], animated=True)
        elif code == "A9":
            nav, stack = self.nav(), self.stack()
            if nav is None or len(stack) != 1:
                return False
            seq = self.emit("nav.pop", nav=nav, animated=True)
        elif code == "A10":
            nav = self.nav()
            if nav is None or not self.popped:
                return False
            seq = self.emit("nav.popTo", nav=nav, vc=self.popped[-1])
        elif code == "A11":
            vc = self.top()
            if vc not in self.header:
                return False
            # A correct child removal, then one with no willMove(toParent: nil). Only a recorder
            # of containment calls sees either (the evidence R11 needs).
            contain = self.emit if self.rec["containment"] else (lambda *a, **k: None)
            badge = self.new_id("BadgeViewController")
            contain("child.add", parent=vc, vc=self.ref(badge, True), slot="badge")
            contain("child.didMove", vc=badge, parent=vc)
            self.advance(2_000_000)
            contain("child.willMove", vc=badge, parent=None)
            contain("child.remove", vc=badge)
            self.advance(2_000_000)
            banner = self.new_id("BannerViewController")
            contain("child.add", parent=vc, vc=self.ref(banner, True), slot="banner")
            contain("child.didMove", vc=banner, parent=vc)
            self.advance(2_000_000)
            seq = contain("child.remove", vc=banner)
        elif code == "A12":
            seq = self.emit("unwind", source=self.top(), action="unwindToCheckout:")
        elif code == "A13":
            source = self.top()
            destination = self.new_id("PromoViewController")
            self.emit("segue", kind="custom", identifier="promo", source=source, destination=self.ref(destination, True))
            seq = self.seq + 1 if self.rec["will"] or self.rec["did"] else None
            self.appear(destination, "will")
            self.appear(destination, "did")
        else:
            raise ValueError(code)
        if seq is not None:
            self.misuses.append({"code": "A14" if code == "A14w" else code, "seq": seq})
        return True

    def finish(self):
        self.dwell(self.t)
        self.final = True
        self.close_focus()
        self.emit("session.end", reason="terminated")


def lognormal(rng, median):
    return int(median * math.exp(rng.gauss(0, 1.0)))


def make_session(seed, number, profile, start, misuse_rate):
    """One session. Its navigation depends on `seed` only: the same seed gives the same
    navigation (and the same misuse, performed the same way) in every profile."""
    rng = random.Random(seed)
    session = Session(rng, "%08x-%04x-4%03x-a%03x-%012x" % (rng.randrange(1 << 32), number & 0xFFFF, PROFILES.index(profile),
                                                            rng.randrange(4096), rng.randrange(1 << 48)), profile, start)
    session.navigation = seed
    session.launch()
    actions = rng.randrange(20, 200)
    seeded = rng.random() < misuse_rate
    seed_at = rng.randrange(3, actions) if seeded else -1
    codes = sorted(MISUSES)
    rapid = rng.random() < 0.2  # a user who taps through quickly (pushes about a second apart)
    for step in range(actions):
        think = rng.randrange(900_000, 1_500_000) if rapid else lognormal(rng, 8_000_000)
        session.dwell(session.t)
        session.advance(think)
        session.dwell(session.t)
        if step == seed_at:
            code = rng.choice(codes)
            session.prepare(code)
            if not session.seed(code):
                raise RuntimeError("misuse %s could not be seeded in session %s (%s)" % (code, session.id, profile))
            continue
        roll = rng.random()
        done = False
        if roll < 0.30:
            done = session.push()
        elif roll < 0.50:
            done = session.pop()
        elif roll < 0.58:
            done = session.present("sheet" if rng.random() < 0.5 else "modal")
        elif roll < 0.70:
            done = session.dismiss()
        elif roll < 0.80:
            done = session.select_tab()
        elif roll < 0.85:
            done = session.cancelled_swipe_back()
        elif roll < 0.88:
            done = session.cancelled_sheet_dismissal()
        elif roll < 0.91:
            session.background()
            done = True
        elif roll < 0.93:
            done = session.push(animated=False)
        if not done:
            session.push() or session.dismiss()
        session.dwell(session.t)
    session.dwell(session.t)
    session.advance(lognormal(rng, 5_000_000))
    session.finish()
    return session


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--sessions", type=int, default=600)
    parser.add_argument("--profile", default="all", help="a profile, 'mix', or 'all' (each profile, then a mix)")
    parser.add_argument("--misuse-rate", type=float, default=0.3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--concurrency", type=int, default=500, help="sessions live at once")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    os.makedirs(args.out, exist_ok=True)
    sessions = []
    base = 1_763_700_000_000_000

    def start_of(number):
        # Sessions start all the time, about `concurrency` of them live at once.
        return base + int(number * 1_200_000_000 / max(1, args.concurrency))

    number = 0
    while number < args.sessions:
        navigation = rng.randrange(1 << 62)
        if args.profile == "all":
            # One navigation recorded by each kind of recorder, then a session of the mix.
            for profile in PROFILES:
                session = make_session(navigation, number, profile, start_of(number), args.misuse_rate)
                session.group = profile
                sessions.append(session)
                number += 1
            profile, group = rng.choice(PROFILES), "mix"
            navigation = rng.randrange(1 << 62)
        elif args.profile == "mix":
            profile, group = rng.choice(PROFILES), "mix"
        else:
            profile, group = args.profile, args.profile
        session = make_session(navigation, number, profile, start_of(number), args.misuse_rate)
        session.group = group
        sessions.append(session)
        number += 1
    lines = sorted((line for s in sessions for line in s.lines), key=lambda item: item[0])
    with open(os.path.join(args.out, "events.jsonl"), "w") as out:
        for _, _, text in lines:
            out.write(text + "\n")
    with open(os.path.join(args.out, "labels.jsonl"), "w") as out:
        for s in sessions:
            out.write(json.dumps({"session": s.id, "profile": s.profile, "group": s.group, "navigation": s.navigation, "misuses": s.misuses,
                                  "cancelledGestures": s.cancelled_gestures, "cancelledGestureSeqs": s.cancelled_gesture_seqs,
                                  "path": ", ".join(s.path)}, separators=(",", ":")) + "\n")
    print("%d sessions, %d events, %d seeded misuses -> %s" % (len(sessions), len(lines), sum(len(s.misuses) for s in sessions), args.out))


if __name__ == "__main__":
    main()
