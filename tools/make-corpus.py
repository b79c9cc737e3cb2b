#!/usr/bin/env python3
"""Regenerate the schema agreement corpus in Tests/Fixtures/corpus/.

    python3 tools/make-corpus.py

Writes good.jsonl (lines the schema accepts), bad.jsonl (lines it rejects, each wrong in
exactly one way; the file contains raw invalid UTF-8 bytes on purpose) and bad.expected
(one `<field path or ->\\t<reason keyword>` line per line of bad.jsonl), then checks all
three against tools/schema-check.py and exits 1 if any line disagrees.
"""

import importlib.util
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "Tests", "Fixtures", "corpus")
MAX_LINE = 65536

# ---------------------------------------------------------------------------------------
# Good lines. Written as JSON text on purpose (3.0 for integers, escapes, raw UTF-8).
# Raw string: the JSON escapes (\u00e9, \n, \", \ud83d\ude00) reach the file unchanged.
# ---------------------------------------------------------------------------------------
GOOD = r'''
{"hello":1,"client":"navlog-corpus/1.0","ack":"none"}
{"type":"session.start","session":"S1-recipes","ts":1763712000000000,"seq":0,"v":1,"app":"dev.navlog.recipes","version":"2.3.1","build":"4711","os":"iOS 18.1","device":"iPhone16,2","idiom":"phone","traits":{"h":"compact","v":"regular"}}
{"type":"app.foreground","session":"S1-recipes","ts":1763712000000100,"seq":1}
{"type":"window.root","session":"S1-recipes","ts":1763712000001000,"seq":2,"window":"main","vc":{"id":"0x6000a0","class":"UITabBarController","kind":"tab","restorationId":"root.tabs"}}
{"type":"tab.set","session":"S1-recipes","ts":1763712000001100,"seq":3,"tab":"0x6000a0","vcs":[{"id":"0x6000b0","class":"UINavigationController","title":"Recipes"},{"id":"0x6000c0","class":"UINavigationController","kind":"navigation","title":"Favorites"},{"id":"0x6000d0","class":"SettingsViewController","kind":"plain"}],"selected":0}
{"type":"nav.set","session":"S1-recipes","ts":1763712000001200,"seq":4,"nav":"0x6000b0","vcs":[{"id":"0x6000b1","class":"RecipeListViewController","sbid":"RecipeList","storyboard":"Main","title":"Recipes"}],"animated":false}
{"type":"vc.appear","session":"S1-recipes","ts":1763712000001300,"seq":5,"vc":"0x6000b1","phase":"will","animated":false}
{"type":"vc.appear","session":"S1-recipes","ts":1763712000001400,"seq":6,"vc":"0x6000b1","phase":"did","animated":false}
{"type":"segue","session":"S1-recipes","ts":1763712001000000,"seq":7,"kind":"show","identifier":"showRecipe","source":"0x6000b1","destination":{"id":"0x6000b2","class":"RecipeDetailViewController","sbid":"RecipeDetail","storyboard":"Main"},"phase":"should","result":true}
{"type":"segue","session":"S1-recipes","ts":1763712001000100,"seq":8,"kind":"show","identifier":"showRecipe","source":"0x6000b1","destination":"0x6000b2","phase":"prepare","segueClass":"UIStoryboardShowSegue"}
{"type":"segue","session":"S1-recipes","ts":1763712001000200,"seq":9,"kind":"show","identifier":"showRecipe","source":"0x6000b1","destination":"0x6000b2","phase":"perform","animated":true}
{"type":"nav.push","session":"S1-recipes","ts":1763712001000300,"seq":10,"cause":9,"nav":"0x6000b0","vc":"0x6000b2","animated":true}
{"type":"transition.begin","session":"S1-recipes","ts":1763712001000400,"seq":11,"id":"t-1","interactive":false}
{"type":"vc.disappear","session":"S1-recipes","ts":1763712001000500,"seq":12,"vc":"0x6000b1","phase":"will","animated":true}
{"type":"vc.appear","session":"S1-recipes","ts":1763712001000600,"seq":13,"vc":"0x6000b2","phase":"will","animated":true}
{"type":"vc.disappear","session":"S1-recipes","ts":1763712001300000,"seq":14,"vc":"0x6000b1","phase":"did","animated":true}
{"type":"vc.appear","session":"S1-recipes","ts":1763712001300100,"seq":15,"vc":"0x6000b2","phase":"did","animated":true}
{"type":"transition.end","session":"S1-recipes","ts":1763712001300200,"seq":16,"id":"t-1","interactive":false,"completed":true}
{"type":"mark","session":"S1-recipes","ts":1763712001400000,"seq":17,"name":"recipe.viewed","props":{"recipe":"Cr\u00e8me br\u00fbl\u00e9e","servings":4,"rating":4.5,"vegetarian":true,"spicy":false}}
{"type":"present","session":"S1-recipes","ts":1763712002000000,"seq":18,"from":"0x6000b2","vc":{"id":"0x6000e0","class":"UIAlertController","kind":"alert","title":"Delete recipe?"},"style":"automatic","animated":true,"alertStyle":"alert"}
{"type":"dismiss","session":"S1-recipes","ts":1763712002500000,"seq":19,"vc":"0x6000b2","animated":true}
{"type":"present","session":"S1-recipes","ts":1763712003000000,"seq":20,"from":"0x6000b2","vc":{"id":"0x6000e1","class":"UIAlertController","kind":"alert"},"style":"popover","animated":true,"alertStyle":"actionSheet","anchor":{"barButtonItem":"share"}}
{"type":"dismiss","session":"S1-recipes","ts":1763712003500000,"seq":21,"vc":"0x6000e1","animated":false}
{"type":"nav.pop","session":"S1-recipes","ts":1763712004000000,"seq":22,"nav":"0x6000b0","vc":"0x6000b2","animated":true}
{"type":"tab.select","session":"S1-recipes","ts":1763712005000000,"seq":23,"tab":"0x6000a0","index":1,"byUser":true}
{"type":"nav.set","session":"S1-recipes","ts":1763712005000100,"seq":24,"nav":"0x6000c0","vcs":[],"animated":false}
{"type":"nav.set","session":"S1-recipes","ts":1763712005000200,"seq":25,"nav":"0x6000c0","vcs":[{"id":"0x6000c1","class":"FavoritesViewController"},{"id":"0x6000c2","class":"RecipeDetailViewController"},"0x6000b1"],"animated":true}
{"type":"nav.popTo","session":"S1-recipes","ts":1763712005100000,"seq":26,"nav":"0x6000c0","vc":"0x6000c1","animated":true}
{"type":"nav.popToRoot","session":"S1-recipes","ts":1763712005200000,"seq":27,"nav":"0x6000c0","animated":false}
{"type":"tab.select","session":"S1-recipes","ts":1763712005300000,"seq":28,"tab":"0x6000a0","vc":"0x6000d0","byUser":false}
{"type":"tab.select","session":"S1-recipes","ts":1763712005400000,"seq":29,"tab":"0x6000a0","index":0,"vc":"0x6000b0"}
{"type":"app.background","session":"S1-recipes","ts":1763712006000000,"seq":30}
{"type":"app.foreground","session":"S1-recipes","ts":1763712100000000,"seq":31}
{"type":"session.end","session":"S1-recipes","ts":1763712200000000,"seq":32,"reason":"user quit"}
{"type":"session.start","session":"S2-ipad","ts":"2025-11-21T10:00:00Z","seq":0,"app":"dev.navlog.mail","idiom":"pad","traits":{"h":"regular","v":"regular"}}
{"type":"window.root","session":"S2-ipad","ts":"2025-11-21T10:00:00.123456Z","seq":1,"vc":{"id":"sp1","class":"UISplitViewController","kind":"split"}}
{"type":"split.set","session":"S2-ipad","ts":"2025-11-21T12:00:00.5+02:00","seq":2,"split":"sp1","primary":{"id":"m1","class":"MailboxesViewController"},"supplementary":{"id":"l1","class":"MessageListViewController"},"secondary":{"id":"d1","class":"MessageViewController","title":"No message"}}
{"type":"split.set","session":"S2-ipad","ts":"2025-11-21T05:00:01-05:00","seq":3,"split":"sp1","secondary":"d1"}
{"type":"split.set","session":"S2-ipad","ts":"2025-11-21T10:00:01.000001Z","seq":4,"split":"sp1"}
{"type":"traits.change","session":"S2-ipad","ts":"2025-11-21T10:00:02.123456789Z","seq":5,"h":"compact","v":"regular"}
{"type":"split.collapse","session":"S2-ipad","ts":"2025-11-21T10:00:02.2Z","seq":6,"split":"sp1"}
{"type":"traits.change","session":"S2-ipad","ts":"2025-11-21T10:00:03Z","seq":7,"h":"regular","v":"compact"}
{"type":"split.expand","session":"S2-ipad","ts":"2025-11-21T10:00:03.5Z","seq":8,"split":{"id":"sp1","class":"UISplitViewController"}}
{"type":"showDetail","session":"S2-ipad","ts":"2025-11-21T10:00:04Z","seq":9,"from":"l1","vc":{"id":"d2","class":"MessageViewController","title":"Re: lunch"}}
{"type":"split.set","session":"S2-ipad","ts":"2025-11-21T10:00:04.000100Z","seq":10,"cause":9,"split":"sp1","secondary":"d2"}
{"type":"show","session":"S2-ipad","ts":"2025-11-21T10:00:05Z","seq":11,"from":"m1","vc":{"id":"l2","class":"MessageListViewController","title":"Archive"}}
{"type":"split.set","session":"S2-ipad","ts":"2025-11-21T10:00:05.1Z","seq":12,"cause":11,"split":"sp1","supplementary":"l2"}
{"type":"present","session":"S2-ipad","ts":"2025-11-21T10:00:06Z","seq":13,"from":"d2","vc":{"id":"c1","class":"ComposeViewController","sbid":"Compose"},"style":"formSheet","transition":"coverVertical","animated":true}
{"type":"present","session":"S2-ipad","ts":"2025-11-21T10:00:07Z","seq":14,"from":"c1","vc":{"id":"p1","class":"AttachmentPickerViewController"},"style":"popover","animated":true,"anchor":{"sourceView":"attachButton","sourceRect":{"x":12,"y":8.5,"width":44,"height":44.0}}}
{"type":"dismiss","session":"S2-ipad","ts":"2025-11-21T10:00:08Z","seq":15,"vc":"p1"}
{"type":"present","session":"S2-ipad","ts":"2025-11-21T10:00:09Z","seq":16,"from":"c1","vc":{"id":"p2","class":"ContactPickerViewController"},"style":"popover","anchor":{"barButtonItem":"contacts","sourceView":"toolbar","sourceRect":{"x":-10,"y":0,"width":1e2,"height":2.5E1}}}
{"type":"dismiss","session":"S2-ipad","ts":"2025-11-21T10:00:10Z","seq":17,"vc":"p2","animated":true}
{"type":"dismiss","session":"S2-ipad","ts":"2025-11-21T10:00:11Z","seq":18,"vc":"d2","animated":true}
{"type":"session.end","session":"S2-ipad","ts":"2024-02-29T23:59:59.999999Z","seq":19}
{"type":"session.start","session":"S3-mac","ts":0,"seq":0,"app":"dev.navlog.notes","idiom":"mac","os":"macOS 15.1","device":"Mac14,2","version":"1.0","build":"1"}
{"type":"window.root","session":"S3-mac","ts":1.7637120000000000e15,"seq":1.0,"window":"notes","vc":{"id":"nav-1","class":"UINavigationController"}}
{"type":"nav.push","session":"S3-mac","seq":2.0,"v":1.0,"nav":"nav-1","vc":{"id":"list-1","class":"NotesListViewController","definesContext":true,"unwindActions":["unwindToList:","unwindFromSettings:"]}}
{"type":"nav.push","session":"S3-mac","seq":3e0,"v":1e0,"nav":"nav-1","vc":{"id":"note-1","class":"NoteViewController","definesContext":false,"unwindActions":[]},"animated":true}
{"type":"present","session":"S3-mac","seq":4,"from":"note-1","vc":{"id":"share-1","class":"ShareViewController"},"style":"currentContext","transition":"crossDissolve"}
{"type":"present","session":"S3-mac","seq":5,"from":"share-1","vc":{"id":"opt-1","class":"OptionsViewController"},"style":"overCurrentContext","transition":"flipHorizontal","animated":false}
{"type":"present","session":"S3-mac","seq":6,"from":"opt-1","vc":{"id":"full-1","class":"FullViewController"},"style":"fullScreen","transition":"partialCurl"}
{"type":"present","session":"S3-mac","seq":7,"from":"full-1","vc":{"id":"over-1","class":"OverlayViewController"},"style":"overFullScreen"}
{"type":"present","session":"S3-mac","seq":8,"from":"over-1","vc":{"id":"sheet-1","class":"SheetViewController"},"style":"pageSheet"}
{"type":"present","session":"S3-mac","seq":9,"from":"sheet-1","vc":{"id":"custom-1","class":"CardViewController"},"style":"custom","transition":"coverVertical"}
{"type":"unwind","session":"S3-mac","seq":10,"source":"custom-1","action":"unwindToList:","target":"list-1"}
{"type":"unwind","session":"S3-mac","seq":11,"source":"note-1","action":"unwindFromSettings:"}
{"type":"dismiss","session":"S3-mac","seq":12,"cause":10,"vc":"note-1","animated":true}
{"type":"nav.popTo","session":"S3-mac","seq":13,"cause":10.0,"nav":"nav-1","vc":"list-1"}
{"type":"session.end","session":"S3-mac","seq":14,"reason":"terminated"}
{"type":"session.start","session":"S4-tv","ts":1763712300000000,"app":"dev.navlog.tv","idiom":"tv","traits":{"h":"regular","v":"regular"}}
{"type":"window.root","session":"S4-tv","vc":{"id":"pg-1","class":"UIPageViewController","kind":"page"}}
{"type":"child.add","session":"S4-tv","parent":"pg-1","vc":{"id":"pg-1-a","class":"PageContentViewController","title":"Page 1"},"slot":"page"}
{"type":"child.didMove","session":"S4-tv","vc":"pg-1-a","parent":"pg-1","slot":"page"}
{"type":"child.willMove","session":"S4-tv","vc":"pg-1-a","parent":null}
{"type":"child.remove","session":"S4-tv","vc":"pg-1-a","parent":"pg-1","slot":"page"}
{"type":"child.didMove","session":"S4-tv","vc":"pg-1-a","parent":null}
{"type":"child.add","session":"S4-tv","parent":{"id":"pg-1","class":"UIPageViewController"},"vc":{"id":"pg-1-b","class":"PageContentViewController"}}
{"type":"child.willMove","session":"S4-tv","vc":"pg-1-b","parent":"pg-1"}
{"type":"child.didMove","session":"S4-tv","vc":"pg-1-b","parent":"pg-1"}
{"type":"child.willMove","session":"S4-tv","vc":"pg-1-b"}
{"type":"child.remove","session":"S4-tv","vc":"pg-1-b"}
{"type":"child.didMove","session":"S4-tv","vc":"pg-1-b"}
{"type":"session.end","session":"S4-tv"}
{"type":"session.start","session":"S5-vision","app":"dev.navlog.gallery","idiom":"vision","traits":{"h":"regular","v":"compact"}}
{"type":"window.root","session":"S5-vision","window":"gallery","vc":{"id":"root-nav","class":"GalleryNavigationController","kind":"navigation"}}
{"type":"segue","session":"S5-vision","kind":"relationship","relationship":"rootViewController","source":"root-nav","destination":{"id":"grid","class":"GridViewController"}}
{"type":"segue","session":"S5-vision","kind":"relationship","relationship":"viewControllers","source":{"id":"tabs","class":"UITabBarController"},"destination":"grid"}
{"type":"segue","session":"S5-vision","kind":"relationship","relationship":"masterViewController","source":{"id":"spl","class":"UISplitViewController"},"destination":"grid"}
{"type":"segue","session":"S5-vision","kind":"relationship","relationship":"detailViewController","source":"spl","destination":{"id":"det","class":"DetailViewController"}}
{"type":"segue","session":"S5-vision","kind":"relationship","relationship":"supplementaryViewController","source":"spl","destination":{"id":"sup","class":"SupplementaryViewController"}}
{"type":"segue","session":"S5-vision","kind":"relationship","relationship":"compactViewController","source":"spl","destination":{"id":"cmp","class":"CompactViewController"}}
{"type":"segue","session":"S5-vision","kind":"showDetail","identifier":"detail","source":"grid","destination":"det","phase":"perform"}
{"type":"segue","session":"S5-vision","kind":"presentation","identifier":"info","source":"grid","destination":{"id":"info","class":"InfoViewController"},"style":"formSheet","transition":"crossDissolve","animated":true}
{"type":"segue","session":"S5-vision","kind":"popoverPresentation","identifier":"filter","source":"grid","destination":{"id":"flt","class":"FilterViewController"},"style":"popover","anchor":{"sourceView":"filterButton","sourceRect":{"x":0,"y":0,"width":30,"height":30}}}
{"type":"segue","session":"S5-vision","kind":"embed","identifier":"embedHeader","source":"grid","destination":{"id":"hdr","class":"HeaderViewController"}}
{"type":"segue","session":"S5-vision","kind":"unwind","identifier":"backToGrid","source":"info","destination":"grid","action":"unwindToGrid:"}
{"type":"segue","session":"S5-vision","kind":"custom","identifier":"fancy","source":"grid","destination":"info","segueClass":"FancySegue","phase":"perform"}
{"type":"segue","session":"S5-vision","kind":"push","identifier":"legacyPush","source":"grid","destination":"det"}
{"type":"segue","session":"S5-vision","kind":"modal","identifier":"legacyModal","source":"grid","destination":"info","style":"automatic"}
{"type":"segue","session":"S5-vision","kind":"replace","identifier":"legacyReplace","source":"grid","destination":"det"}
{"type":"segue","session":"S5-vision","kind":"popover","identifier":"legacyPopover","source":"grid","destination":"flt","anchor":{"barButtonItem":"filter"}}
{"type":"segue","session":"S5-vision","kind":"show","identifier":"veto","source":"grid","phase":"should","result":false}
{"type":"session.end","session":"S5-vision","reason":""}
{"type":"mark","session":"S6-unicode","name":"unicode.escapes","props":{"quote":"she said \"hi\"","newline":"line1\nline2","tab":"a\tb","e":"caf\u00e9","smile":"\ud83d\ude00","slash":"a\/b","backslash":"C:\\temp","nul":"\u0000"}}
{"type":"mark","session":"S6-unicode","name":"unicode.raw","props":{"e":"café","smile":"😀","cjk":"漢字","rtl":"שלום","combining":"e\u0301"}}
{"type":"window.root","session":"S6-unicode","vc":{"id":"\u00e9cran-1","class":"\u00c9cranViewController","title":"Cr\u00e8me br\u00fbl\u00e9e \ud83c\udf6e"}}
{"type":"nav.push","session":"S6-unicode","nav":{"id":"nav-é","class":"UINavigationController"},"vc":{"id":"détail","class":"DétailViewController","title":"Crème brûlée 🍮"}}
{"type":"mark","session":"S6-unicode","name":"numbers","props":{"neg":-1,"negf":-0.25,"exp":6.02e23,"negexp":-1.5E-7,"zero":0,"negzero":-0,"int3":3.0,"big":9007199254740993}}
{"type":"mark","session":"S6-unicode","name":"bools","props":{"t":true,"f":false}}
{"type":"mark","session":"S6-unicode","name":"empty-props","props":{}}
{"type":"mark","session":"S6-unicode","name":""}
{"type":"mark","session":"S6-unicode","name":"props with odd keys","props":{"":"empty key","_underscore":1,"with space":"x","ключ":"значение"}}
{"type":"mark","session":"S6-unicode","name":"trusted fields are ignored","_lsn":42,"_recv":1763712000000000,"_uid":501,"_gid":20,"_pid":4242,"_":null,"_custom":{"anything":[1,"two",null,{"x":false}]}}
{"type":"app.background","session":"S6-unicode","_lsn":"not even a number"}
{"type":"app.foreground","session":"S6-unicode","ts":253402300799999999,"seq":9223372036854775807,"cause":9223372036854775807}
{"type":"session.end","session":"S6-unicode","ts":"9999-12-31T23:59:59.999999Z","seq":0}
   {"type":"mark","session":"S6-unicode","name":"leading and trailing JSON white space"}	 
{ "type" : "mark" , "session" : "S6-unicode" , "name" : "spaced out" , "props" : { "a" : 1 } }
{"name":"key order does not matter","session":"S6-unicode","type":"mark"}
{"type":"session.start","session":"S7-pad","app":"dev.navlog.shop","idiom":"pad","traits":{"v":"compact","h":"compact"}}
{"type":"window.root","session":"S7-pad","window":"main","vc":{"id":"tb","class":"UITabBarController"}}
{"type":"tab.set","session":"S7-pad","tab":"tb","vcs":[]}
{"type":"tab.set","session":"S7-pad","tab":"tb","vcs":["n1",{"id":"n2","class":"UINavigationController"}],"selected":1.0}
{"type":"tab.select","session":"S7-pad","tab":"tb","index":0}
{"type":"tab.select","session":"S7-pad","tab":{"id":"tb","class":"UITabBarController","kind":"tab"},"vc":"n2","byUser":true}
{"type":"nav.push","session":"S7-pad","nav":"n2","vc":{"id":"cart","class":"CartViewController","sbid":"Cart","storyboard":"Shop","title":"Cart","kind":"plain","definesContext":true,"unwindActions":["unwindToCart:"],"restorationId":"cart"},"animated":false}
{"type":"present","session":"S7-pad","from":"cart","vc":{"id":"checkout","class":"UINavigationController","kind":"navigation"},"style":"pageSheet"}
{"type":"nav.set","session":"S7-pad","nav":"checkout","vcs":[{"id":"addr","class":"AddressViewController"}]}
{"type":"nav.push","session":"S7-pad","nav":"checkout","vc":{"id":"pay","class":"PaymentViewController"}}
{"type":"nav.pop","session":"S7-pad","nav":"checkout"}
{"type":"nav.pop","session":"S7-pad","nav":"checkout","animated":true}
{"type":"nav.popToRoot","session":"S7-pad","nav":"checkout"}
{"type":"nav.popTo","session":"S7-pad","nav":"checkout","vc":{"id":"addr","class":"AddressViewController"}}
{"type":"show","session":"S7-pad","from":"addr","vc":"pay"}
{"type":"showDetail","session":"S7-pad","from":"cart","vc":"addr"}
{"type":"unwind","session":"S7-pad","source":"pay","action":"unwindToCart:","target":{"id":"cart","class":"CartViewController"}}
{"type":"dismiss","session":"S7-pad","vc":"checkout"}
{"type":"transition.begin","session":"S7-pad","id":"swipe-back-7","interactive":true}
{"type":"transition.end","session":"S7-pad","id":"swipe-back-7","interactive":true,"completed":false}
{"type":"transition.begin","session":"S7-pad","id":"x"}
{"type":"transition.end","session":"S7-pad","id":"x"}
{"type":"vc.disappear","session":"S7-pad","vc":"cart","phase":"did"}
{"type":"split.collapse","session":"S7-pad","split":"sp"}
{"type":"split.expand","session":"S7-pad","split":"sp"}
{"type":"traits.change","session":"S7-pad","h":"compact","v":"compact"}
{"type":"traits.change","session":"S7-pad","h":"regular","v":"regular","_v":1}
{"type":"session.end","session":"S7-pad"}
{"type":"app.background","session":"S7-pad","ts":"2025-11-21T10:00:00+00:00"}
{"type":"app.foreground","session":"S7-pad","ts":"2025-11-21T10:00:00-00:00"}
{"type":"app.foreground","session":"S7-pad","ts":"2025-11-21T23:59:59+23:59"}
{"type":"mark","session":"S8","name":"ts zero","ts":0,"seq":0,"cause":0}
{"type":"mark","session":"a","name":"one-character session"}
{"type":"mark","session":"\u00e9","name":"escaped session"}
{"type":"mark","session":"x\"y\\z","name":"session with escapes"}
'''

GOOD_LINES = [l.encode("utf-8") for l in GOOD.strip("\n").split("\n")]

# Every type once more with the full envelope (ts, seq, v, cause) and a trusted field.
FULL = [
    ("session.start", {"app": "dev.navlog.full", "idiom": "phone", "traits": {"h": "compact", "v": "compact"}}),
    ("app.foreground", {}),
    ("window.root", {"window": "main", "vc": {"id": "f-nav", "class": "UINavigationController"}}),
    ("nav.set", {"nav": "f-nav", "vcs": [{"id": "f-a", "class": "A"}], "animated": False}),
    ("nav.push", {"nav": "f-nav", "vc": {"id": "f-b", "class": "B"}, "animated": True}),
    ("nav.pop", {"nav": "f-nav", "vc": "f-b", "animated": True}),
    ("nav.popTo", {"nav": "f-nav", "vc": "f-a", "animated": False}),
    ("nav.popToRoot", {"nav": "f-nav", "animated": True}),
    ("tab.set", {"tab": {"id": "f-tab", "class": "UITabBarController"}, "vcs": ["f-nav"], "selected": 0}),
    ("tab.select", {"tab": "f-tab", "index": 0, "vc": "f-nav", "byUser": False}),
    ("split.set", {"split": {"id": "f-split", "class": "UISplitViewController"}, "primary": "f-a", "secondary": "f-b",
                   "supplementary": {"id": "f-c", "class": "C"}}),
    ("split.collapse", {"split": "f-split"}),
    ("split.expand", {"split": "f-split"}),
    ("traits.change", {"h": "regular", "v": "compact"}),
    ("show", {"from": "f-a", "vc": {"id": "f-d", "class": "D"}}),
    ("showDetail", {"from": "f-a", "vc": "f-d"}),
    ("segue", {"kind": "popoverPresentation", "source": "f-a", "identifier": "pop", "destination": "f-d", "style": "popover",
               "transition": "coverVertical", "animated": True,
               "anchor": {"barButtonItem": "more", "sourceView": "bar", "sourceRect": {"x": 1, "y": 2, "width": 3, "height": 4}},
               "action": "unused:", "relationship": "rootViewController", "phase": "perform", "result": True,
               "segueClass": "UIStoryboardPopoverPresentationSegue"}),
    ("present", {"from": "f-a", "vc": "f-d", "style": "popover", "transition": "crossDissolve", "animated": True,
                 "anchor": {"barButtonItem": "more"}, "alertStyle": "actionSheet"}),
    ("dismiss", {"vc": "f-d", "animated": False}),
    ("unwind", {"source": "f-d", "action": "unwindToA:", "target": "f-a"}),
    ("child.add", {"parent": "f-a", "vc": {"id": "f-e", "class": "E"}, "slot": "header"}),
    ("child.didMove", {"vc": "f-e", "parent": "f-a", "slot": "header"}),
    ("child.willMove", {"vc": "f-e", "parent": None, "slot": "header"}),
    ("child.remove", {"vc": "f-e", "parent": "f-a", "slot": "header"}),
    ("vc.appear", {"vc": "f-a", "phase": "will", "animated": True}),
    ("vc.disappear", {"vc": "f-b", "phase": "did", "animated": False}),
    ("transition.begin", {"id": "f-t", "interactive": True}),
    ("transition.end", {"id": "f-t", "interactive": True, "completed": True}),
    ("mark", {"name": "full", "props": {"k": "v", "n": -3, "b": True}}),
    ("app.background", {}),
    ("session.end", {"reason": "done"}),
]
for i, (t, own) in enumerate(FULL):
    ev = {"type": t, "session": "S10-full", "ts": 1763713000000000 + i * 1000, "seq": i, "cause": max(i - 1, 0)}
    if t != "traits.change":
        ev["v"] = 1
    ev.update(own)
    ev["_recv"] = 1763713000000500 + i * 1000
    GOOD_LINES.append(json.dumps(ev, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))

# Sessions at exactly the 128-byte limit.
GOOD_LINES.append(('{"type":"mark","session":"%s","name":"session of 128 ASCII bytes"}' % ("s" * 128)).encode())
GOOD_LINES.append(('{"type":"mark","session":"%s","name":"session of 42 three-byte chars + 2 = 128 bytes"}'
                   % ("€" * 42 + "ab")).encode())
GOOD_LINES.append(('{"type":"mark","session":"%s","name":"session of 32 four-byte chars = 128 bytes"}'
                   % ("😀" * 32)).encode())
GOOD_LINES.append(('{"type":"mark","session":"%s","name":"session of 128 escaped chars"}'
                   % ("\\u00e9" * 64)).encode())  # 64 x é = 128 bytes of UTF-8
# A line with a CRLF ending (the \r is dropped).
GOOD_LINES.append(b'{"type":"mark","session":"S8","name":"CRLF line ending"}\r')


def exact_line(total, prefix, suffix, fill=b"x"):
    n = total - len(prefix) - len(suffix)
    line = prefix + fill * n + suffix
    assert len(line) == total, len(line)
    return line


# A line of exactly 65536 bytes is still accepted.
GOOD_LINES.append(exact_line(MAX_LINE, b'{"type":"mark","session":"S8","name":"', b'"}'))

# ---------------------------------------------------------------------------------------
# Bad lines: (line, field path or "-", reason keyword). Each is wrong in exactly one way.
# ---------------------------------------------------------------------------------------
P = '{"type":"nav.push","session":"S9","seq":1,"nav":"0xN","vc":{"id":"0xV","class":"V"},"animated":true'  # + "}"
M = '{"type":"mark","session":"S9","name":"m"'  # + "}"

BAD = [
    # invalid JSON
    (P, "-", "json"),  # truncated: no closing brace
    (M + ',}', "-", "json"),  # trailing comma in object
    ('{"type":"nav.set","session":"S9","nav":"n","vcs":["a","b",]}', "-", "json"),  # trailing comma in array
    ("{'type':'mark','session':'S9','name':'m'}", "-", "json"),  # single quotes
    (M + ',"props":{"r":NaN}}', "-", "json"),
    (M + ',"props":{"r":Infinity}}', "-", "json"),
    (M + ',"props":{"r":-Infinity}}', "-", "json"),
    ('mark', "-", "json"),  # bare word
    (M + '} // a comment', "-", "json"),
    ('/* comment */ ' + M + '}', "-", "json"),
    (M + '} ' + M + '}', "-", "json"),  # two values on one line
    ('{type:"mark","session":"S9","name":"m"}', "-", "json"),  # unquoted key
    (M + ',"seq":01}', "-", "json"),  # leading zero
    (M + ',"seq":0x1F}', "-", "json"),  # hex number
    (M + ',"seq":+1}', "-", "json"),  # plus sign
    (M + ',"props":{"r":.5}}', "-", "json"),  # no integer part
    (M + ',"props":{"r":1.}}', "-", "json"),  # no fraction digits
    (P.replace('"animated":true', '"animated":True') + '}', "-", "json"),  # capitalised literal
    ('{"type":"mark","session":"S9","name":"tab\there"}', "-", "json"),  # raw control character in a string
    ('{"type":"mark","session":"S9","name":"bad \\x41 escape"}', "-", "json"),  # invalid escape
    ('{"type":"mark","session":"S9","name":"bad \\u12G4 escape"}', "-", "json"),  # invalid \u escape
    ('{"type":"mark","session":"S9","name":"unterminated}', "-", "json"),
    (M + '}]', "-", "json"),  # trailing garbage
    # invalid UTF-8 (raw bytes)
    (b'{"type":"mark","session":"S9","name":"\xff"}', "-", "utf8"),
    (b'{"type":"mark","session":"S9","name":"\xc3\x28"}', "-", "utf8"),
    (b'{"type":"mark","session":"S9","name":"\xc0\xaf"}', "-", "utf8"),  # overlong '/'
    (b'{"type":"mark","session":"S9","name":"\xe0\x80\xaf"}', "-", "utf8"),  # overlong, 3 bytes
    (b'{"type":"mark","session":"S9","name":"\xed\xa0\x80"}', "-", "utf8"),  # UTF-8-encoded surrogate
    (b'{"type":"mark","session":"S9","name":"\xe2\x82"}', "-", "utf8"),  # truncated sequence
    (b'{"type":"mark","session":"S9","name":"\xf4\x90\x80\x80"}', "-", "utf8"),  # above U+10FFFF
    (b'{"type":"mark","session":"S9","name":"\x80"}', "-", "utf8"),  # lone continuation byte
    (b'{"type":"mark","session":"S9","name":"m","\xfe":1}', "-", "utf8"),  # in a key
    # lone surrogate escapes
    ('{"type":"mark","session":"S9","name":"\\ud83d"}', "-", "utf8"),
    ('{"type":"mark","session":"S9","name":"\\ude00 low"}', "-", "utf8"),
    ('{"type":"mark","session":"S9","name":"\\ude00\\ud83d"}', "-", "utf8"),  # reversed pair
    ('{"type":"mark","session":"S9","name":"m","props":{"\\udc00":1}}', "-", "utf8"),  # in a key
    # not an object
    ('[1,2]', "-", "not-object"),
    ('[' + M + '}]', "-", "not-object"),
    ('42', "-", "not-object"),
    ('"mark"', "-", "not-object"),
    ('null', "-", "not-object"),
    ('true', "-", "not-object"),
    # duplicate keys
    (P + ',"vc":"0xW"}', "vc", "duplicate-key"),
    ('{"type":"mark","type":"mark","session":"S9","name":"m"}', "type", "duplicate-key"),
    (P[:-len(',"animated":true')].replace('"vc":{"id":"0xV","class":"V"}', '"vc":{"id":"0xV","class":"V","id":"0xW"}') + '}',
     "vc.id", "duplicate-key"),
    (M + ',"props":{"a":1,"b":2,"a":3}}', "props.a", "duplicate-key"),
    ('{"type":"nav.set","session":"S9","nav":"n","vcs":[{"id":"a","class":"A","class":"B"}]}', "vcs[0].class", "duplicate-key"),
    (P.replace('"vc":', '"v\\u0063":', 1) + ',"vc":"0xW"}', "vc", "duplicate-key"),  # same key after unescaping
    # type
    ('{"type":"nav.shove","session":"S9"}', "type", "unknown-type"),
    ('{"type":"Nav.Push","session":"S9","nav":"n","vc":"v"}', "type", "unknown-type"),
    ('{"type":"","session":"S9"}', "type", "unknown-type"),
    ('{"type":"mark ","session":"S9","name":"m"}', "type", "unknown-type"),
    ('{"session":"S9","name":"m"}', "type", "missing"),
    ('{}', "type", "missing"),
    ('{"type":5,"session":"S9"}', "type", "type"),
    ('{"type":null,"session":"S9"}', "type", "type"),
    ('{"type":["mark"],"session":"S9","name":"m"}', "type", "type"),
    # session
    ('{"type":"mark","name":"m"}', "session", "missing"),
    ('{"type":"mark","session":"","name":"m"}', "session", "empty"),
    ('{"type":"mark","session":"%s","name":"m"}' % ("s" * 129), "session", "range"),
    ('{"type":"mark","session":"%s","name":"m"}' % ("€" * 43), "session", "range"),  # 43 chars, 129 bytes
    ('{"type":"mark","session":"%s","name":"m"}' % ("😀" * 32 + "x"), "session", "range"),  # 33 chars, 129 bytes
    ('{"type":"mark","session":7,"name":"m"}', "session", "type"),
    ('{"type":"mark","session":null,"name":"m"}', "session", "type"),
    # ts
    (M + ',"ts":true}', "ts", "type"),
    (M + ',"ts":null}', "ts", "type"),
    (M + ',"ts":-1}', "ts", "range"),
    (M + ',"ts":1.5}', "ts", "type"),
    (M + ',"ts":253402300800000000}', "ts", "range"),
    (M + ',"ts":"2025-13-01T00:00:00Z"}', "ts", "timestamp"),
    (M + ',"ts":"2025-11-21T10:00:00"}', "ts", "timestamp"),  # no zone
    (M + ',"ts":"yesterday"}', "ts", "timestamp"),
    (M + ',"ts":"2025-11-21 10:00:00Z"}', "ts", "timestamp"),  # space instead of T
    (M + ',"ts":"2025-02-30T00:00:00Z"}', "ts", "timestamp"),  # no such day
    (M + ',"ts":"2025-11-21T24:00:00Z"}', "ts", "timestamp"),
    (M + ',"ts":"2016-12-31T23:59:60Z"}', "ts", "timestamp"),  # leap second not accepted
    (M + ',"ts":"2025-11-21t10:00:00z"}', "ts", "timestamp"),  # lower-case t/z not accepted
    (M + ',"ts":"2025-11-21T10:00:00.Z"}', "ts", "timestamp"),  # empty fraction
    (M + ',"ts":"2025-11-21T10:00:00+0200"}', "ts", "timestamp"),  # offset without colon
    (M + ',"ts":"2025-11-21"}', "ts", "timestamp"),  # date only
    (M + ',"ts":"1763712000000000"}', "ts", "timestamp"),  # integer in a string
    # seq, v, cause
    (M + ',"seq":-1}', "seq", "range"),
    (M + ',"seq":"5"}', "seq", "type"),
    (M + ',"seq":2.5}', "seq", "type"),
    (M + ',"seq":9223372036854775808}', "seq", "range"),
    (M + ',"v":2}', "v", "version"),
    (M + ',"v":"1"}', "v", "version"),
    (M + ',"v":0}', "v", "version"),
    (M + ',"v":true}', "v", "version"),
    (M + ',"cause":-3}', "cause", "range"),
    (M + ',"cause":"7"}', "cause", "type"),
    (M + ',"cause":7.25}', "cause", "type"),
    # missing required fields
    ('{"type":"nav.push","session":"S9","nav":"0xN","animated":true}', "vc", "missing"),
    ('{"type":"nav.push","session":"S9","vc":"0xV"}', "nav", "missing"),
    ('{"type":"nav.pop","session":"S9","vc":"0xV"}', "nav", "missing"),
    ('{"type":"nav.popTo","session":"S9","nav":"0xN"}', "vc", "missing"),
    ('{"type":"nav.popToRoot","session":"S9","animated":false}', "nav", "missing"),
    ('{"type":"nav.set","session":"S9","nav":"0xN"}', "vcs", "missing"),
    ('{"type":"tab.set","session":"S9","vcs":[]}', "tab", "missing"),
    ('{"type":"tab.select","session":"S9","tab":"t","byUser":true}', "index", "missing"),
    ('{"type":"tab.select","session":"S9","index":0}', "tab", "missing"),
    ('{"type":"split.set","session":"S9","primary":"p"}', "split", "missing"),
    ('{"type":"split.collapse","session":"S9"}', "split", "missing"),
    ('{"type":"split.expand","session":"S9"}', "split", "missing"),
    ('{"type":"present","session":"S9","vc":"0xV","style":"formSheet"}', "from", "missing"),
    ('{"type":"present","session":"S9","from":"0xF"}', "vc", "missing"),
    ('{"type":"dismiss","session":"S9","animated":true}', "vc", "missing"),
    ('{"type":"show","session":"S9","vc":"0xV"}', "from", "missing"),
    ('{"type":"showDetail","session":"S9","from":"0xF"}', "vc", "missing"),
    ('{"type":"segue","session":"S9","source":"0xS","identifier":"x"}', "kind", "missing"),
    ('{"type":"segue","session":"S9","kind":"show","destination":"0xD"}', "source", "missing"),
    ('{"type":"unwind","session":"S9","source":"0xS"}', "action", "missing"),
    ('{"type":"unwind","session":"S9","action":"unwindToList:"}', "source", "missing"),
    ('{"type":"child.add","session":"S9","vc":"0xV"}', "parent", "missing"),
    ('{"type":"child.add","session":"S9","parent":"0xP"}', "vc", "missing"),
    ('{"type":"child.remove","session":"S9","parent":"0xP"}', "vc", "missing"),
    ('{"type":"child.willMove","session":"S9","parent":null}', "vc", "missing"),
    ('{"type":"child.didMove","session":"S9","parent":"0xP"}', "vc", "missing"),
    ('{"type":"vc.appear","session":"S9","vc":"0xV","animated":true}', "phase", "missing"),
    ('{"type":"vc.disappear","session":"S9","phase":"did"}', "vc", "missing"),
    ('{"type":"transition.begin","session":"S9","interactive":true}', "id", "missing"),
    ('{"type":"transition.end","session":"S9","completed":true}', "id", "missing"),
    ('{"type":"mark","session":"S9","props":{}}', "name", "missing"),
    ('{"type":"traits.change","session":"S9","v":"regular"}', "h", "missing"),
    ('{"type":"traits.change","session":"S9","h":"regular"}', "v", "missing"),
    ('{"type":"session.start","session":"S9","idiom":"phone"}', "app", "missing"),
    ('{"type":"session.start","session":"S9","app":"a","traits":{"h":"compact"}}', "traits.v", "missing"),
    ('{"type":"window.root","session":"S9","window":"main"}', "vc", "missing"),
    # mistyped fields
    (P + ',"nav2":1}', "nav2", "unknown-field"),
    (P.replace('"animated":true', '"animated":"yes"') + '}', "animated", "type"),
    (P.replace('"animated":true', '"animated":null') + '}', "animated", "type"),
    (P.replace('"animated":true', '"animated":1') + '}', "animated", "type"),
    ('{"type":"nav.set","session":"S9","nav":"n","vcs":"0xA"}', "vcs", "type"),
    ('{"type":"nav.set","session":"S9","nav":"n","vcs":{"id":"a","class":"A"}}', "vcs", "type"),
    ('{"type":"nav.set","session":"S9","nav":"n","vcs":["a",3]}', "vcs[1]", "type"),
    ('{"type":"tab.set","session":"S9","tab":"t","vcs":["a",null]}', "vcs[1]", "type"),
    ('{"type":"nav.set","session":"S9","nav":"n","vcs":["a",{"id":"","class":"B"}]}', "vcs[1].id", "empty"),
    ('{"type":"nav.set","session":"S9","nav":"n","vcs":[{"class":"B"}]}', "vcs[0].id", "missing"),
    ('{"type":"nav.push","session":"S9","nav":"n","vc":{"class":"V"}}', "vc.id", "missing"),
    ('{"type":"nav.push","session":"S9","nav":"n","vc":{"id":"0xV"}}', "vc.class", "missing"),
    ('{"type":"nav.push","session":"S9","nav":"n","vc":{"id":"","class":"V"}}', "vc.id", "empty"),
    ('{"type":"nav.push","session":"S9","nav":"n","vc":""}', "vc", "empty"),
    ('{"type":"nav.push","session":"S9","nav":"n","vc":42}', "vc", "type"),
    ('{"type":"nav.push","session":"S9","nav":"n","vc":null}', "vc", "type"),
    ('{"type":"nav.push","session":"S9","nav":"n","vc":["0xV"]}', "vc", "type"),
    ('{"type":"nav.push","session":"S9","nav":"n","vc":{"id":7,"class":"V"}}', "vc.id", "type"),
    ('{"type":"nav.push","session":"S9","nav":"n","vc":{"id":"0xV","class":null}}', "vc.class", "type"),
    ('{"type":"nav.push","session":"S9","nav":"n","vc":{"id":"0xV","class":"V","name":"x"}}', "vc.name", "unknown-field"),
    ('{"type":"nav.push","session":"S9","nav":"n","vc":{"id":"0xV","class":"V","_note":"x"}}', "vc._note", "unknown-field"),
    ('{"type":"nav.push","session":"S9","nav":"n","vc":{"id":"0xV","class":"V","kind":"window"}}', "vc.kind", "enum"),
    ('{"type":"nav.push","session":"S9","nav":"n","vc":{"id":"0xV","class":"V","definesContext":"true"}}', "vc.definesContext", "type"),
    ('{"type":"nav.push","session":"S9","nav":"n","vc":{"id":"0xV","class":"V","unwindActions":"unwind:"}}', "vc.unwindActions", "type"),
    ('{"type":"nav.push","session":"S9","nav":"n","vc":{"id":"0xV","class":"V","unwindActions":[1]}}', "vc.unwindActions[0]", "type"),
    ('{"type":"nav.push","session":"S9","nav":"n","vc":{"id":"0xV","class":"V","title":false}}', "vc.title", "type"),
    ('{"type":"present","session":"S9","from":"f","vc":"v","style":"popover","anchor":{"sourceView":"b","sourceRect":{"x":0,"y":0,"width":10}}}',
     "anchor.sourceRect.height", "missing"),
    ('{"type":"present","session":"S9","from":"f","vc":"v","style":"popover","anchor":{"sourceView":"b","sourceRect":{"x":"0","y":0,"width":10,"height":10}}}',
     "anchor.sourceRect.x", "type"),
    ('{"type":"present","session":"S9","from":"f","vc":"v","style":"popover","anchor":{"sourceView":"b","sourceRect":{"x":0,"y":0,"width":10,"height":10,"z":1}}}',
     "anchor.sourceRect.z", "unknown-field"),
    ('{"type":"present","session":"S9","from":"f","vc":"v","style":"popover","anchor":{"view":"b"}}', "anchor.view", "unknown-field"),
    ('{"type":"present","session":"S9","from":"f","vc":"v","style":"popover","anchor":"shareButton"}', "anchor", "type"),
    ('{"type":"present","session":"S9","from":"f","vc":"v","style":"sideways"}', "style", "enum"),
    ('{"type":"present","session":"S9","from":"f","vc":"v","transition":"fade"}', "transition", "enum"),
    ('{"type":"present","session":"S9","from":"f","vc":"v","alertStyle":"sheet"}', "alertStyle", "enum"),
    (M + ',"props":{"size":{"w":1}}}', "props.size", "type"),
    (M + ',"props":{"tags":["a","b"]}}', "props.tags", "type"),
    (M + ',"props":{"note":null}}', "props.note", "type"),
    (M + ',"props":[1,2]}', "props", "type"),
    ('{"type":"mark","session":"S9","name":5}', "name", "type"),
    ('{"type":"session.start","session":"S9","app":"a","traits":{"h":"huge","v":"regular"}}', "traits.h", "enum"),
    ('{"type":"session.start","session":"S9","app":"a","traits":{"h":"compact","v":"regular","d":"x"}}', "traits.d", "unknown-field"),
    ('{"type":"session.start","session":"S9","app":"a","idiom":"watch"}', "idiom", "enum"),
    ('{"type":"session.start","session":"S9","app":5}', "app", "type"),
    ('{"type":"traits.change","session":"S9","h":"huge","v":"regular"}', "h", "enum"),
    ('{"type":"traits.change","session":"S9","h":"compact","v":1}', "v", "enum"),  # here v is a size class
    ('{"type":"vc.appear","session":"S9","vc":"0xV","phase":"maybe"}', "phase", "enum"),
    ('{"type":"tab.select","session":"S9","tab":"t","index":-1}', "index", "range"),
    ('{"type":"tab.select","session":"S9","tab":"t","index":1.5}', "index", "type"),
    ('{"type":"tab.select","session":"S9","tab":"t","index":0,"byUser":1}', "byUser", "type"),
    ('{"type":"tab.set","session":"S9","tab":"t","vcs":[],"selected":"0"}', "selected", "type"),
    ('{"type":"segue","session":"S9","kind":"push-modal","source":"s"}', "kind", "enum"),
    ('{"type":"segue","session":"S9","kind":"relationship","source":"s","relationship":"child"}', "relationship", "enum"),
    ('{"type":"segue","session":"S9","kind":"show","source":"s","phase":"should","result":"no"}', "result", "type"),
    ('{"type":"segue","session":"S9","kind":"show","source":"s","phase":"after"}', "phase", "enum"),
    ('{"type":"child.add","session":"S9","parent":null,"vc":"0xV"}', "parent", "type"),  # null only for willMove/didMove
    ('{"type":"child.willMove","session":"S9","vc":"0xV","parent":5}', "parent", "type"),
    ('{"type":"child.didMove","session":"S9","vc":"0xV","parent":""}', "parent", "empty"),
    ('{"type":"child.add","session":"S9","parent":"0xP","vc":"0xV","slot":3}', "slot", "type"),
    ('{"type":"transition.begin","session":"S9","id":""}', "id", "empty"),
    ('{"type":"transition.end","session":"S9","id":"t","completed":"yes"}', "completed", "type"),
    ('{"type":"window.root","session":"S9","window":1,"vc":"0xV"}', "window", "type"),
    # unknown fields
    (P.replace('"animated"', '"aniamted"') + '}', "aniamted", "unknown-field"),
    ('{"type":"app.foreground","session":"S9","vc":"0xV"}', "vc", "unknown-field"),
    ('{"type":"nav.pop","session":"S9","nav":"n","vcs":[]}', "vcs", "unknown-field"),
    ('{"type":"mark","session":"S9","name":"m","Type":"mark"}', "Type", "unknown-field"),
    ('{"type":"session.end","session":"S9","reason":"r","hello2":1}', "hello2", "unknown-field"),
]

# One line longer than the limit (a single line in the file).
BAD.append((exact_line(MAX_LINE + 1, b'{"type":"mark","session":"S9","name":"', b'"}'), "-", "too-long"))


def load_checker():
    spec = importlib.util.spec_from_file_location("schema_check", os.path.join(ROOT, "tools", "schema-check.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.Checker()


def main():
    os.makedirs(OUT, exist_ok=True)
    bad_lines = []
    expected = []
    for line, field, kind in BAD:
        if isinstance(line, str):
            line = line.encode("utf-8")
        assert b"\n" not in line and line.strip(b" \t\r"), line
        bad_lines.append(line)
        expected.append("%s\t%s" % (field, kind))
    for line in GOOD_LINES:
        assert b"\n" not in line, line
    with open(os.path.join(OUT, "good.jsonl"), "wb") as f:
        f.write(b"\n".join(GOOD_LINES) + b"\n")
    with open(os.path.join(OUT, "bad.jsonl"), "wb") as f:
        f.write(b"\n".join(bad_lines) + b"\n")
    with open(os.path.join(OUT, "bad.expected"), "w", encoding="utf-8", newline="\n") as f:
        f.write("\n".join(expected) + "\n")

    checker = load_checker()
    failures = 0
    for n, line in enumerate(GOOD_LINES, 1):
        res = checker.check_line(line)
        if res is None or not res["ok"]:
            failures += 1
            print("good.jsonl:%d: not accepted: %s" % (n, res), file=sys.stderr)
    for n, (line, exp) in enumerate(zip(bad_lines, expected), 1):
        res = checker.check_line(line)
        got = None if res is None else ("%s\t%s" % (res.get("field"), res.get("kind")) if not res["ok"] else "ok")
        if got != exp:
            failures += 1
            print("bad.jsonl:%d: expected %r, got %r (%s)" % (n, exp, got, res and res.get("reason", "")[:200]),
                  file=sys.stderr)
    print("good: %d lines, bad: %d lines, disagreements: %d" % (len(GOOD_LINES), len(bad_lines), failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
