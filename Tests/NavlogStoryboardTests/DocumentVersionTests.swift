import NavlogStoryboard
import Testing

/// Small storyboards written for the cases the corpus has few or no examples of: version 1.1
/// documents, `<classes>` that declare unwind actions, references within one file, titles
/// written as elements, and every kind of top-level object beside a controller.
@Suite("document versions and rare constructs")
struct DocumentVersionTests {
    /// An Xcode 4.2 (iOS 5) iPad storyboard: no exits, no unwind segues, `<classes>`, a
    /// popover with an arrow-direction child, a replace segue in a split view.
    static let version11 = """
        <?xml version="1.0" encoding="UTF-8" standalone="no"?>
        <document type="com.apple.InterfaceBuilder3.CocoaTouch.Storyboard.XIB" version="1.1" toolsVersion="2182" systemVersion="11D50" targetRuntime="iOS.CocoaTouch.iPad" propertyAccessControl="none" initialViewController="5">
            <dependencies>
                <deployment defaultVersion="1296" identifier="iOS"/>
                <plugIn identifier="com.apple.InterfaceBuilder.IBCocoaTouchPlugin" version="1181"/>
            </dependencies>
            <scenes>
                <!--Split View Controller-->
                <scene sceneID="4">
                    <objects>
                        <placeholder placeholderIdentifier="IBFirstResponder" id="3" sceneMemberID="firstResponder"/>
                        <splitViewController id="5" sceneMemberID="viewController">
                            <toolbarItems/>
                            <connections>
                                <segue destination="12" kind="relationship" relationship="masterViewController" id="9"/>
                                <segue destination="21" kind="relationship" relationship="detailViewController" id="10"/>
                            </connections>
                        </splitViewController>
                    </objects>
                </scene>
                <scene sceneID="14">
                    <objects>
                        <placeholder placeholderIdentifier="IBFirstResponder" id="13" sceneMemberID="firstResponder"/>
                        <tableViewController clearsSelectionOnViewWillAppear="NO" id="12" customClass="MasterViewController" sceneMemberID="viewController">
                            <tableView key="view" id="15">
                                <prototypes>
                                    <tableViewCell contentMode="scaleToFill" id="16">
                                        <connections>
                                            <segue destination="21" kind="replace" identifier="showDetail" splitViewControllerTargetIndex="1" id="17"/>
                                        </connections>
                                    </tableViewCell>
                                </prototypes>
                            </tableView>
                            <navigationItem key="navigationItem" title="Master" id="18">
                                <barButtonItem key="rightBarButtonItem" systemItem="add" id="19">
                                    <connections>
                                        <segue destination="31" kind="popover" identifier="add" popoverAnchorBarButtonItem="19" id="20">
                                            <popoverArrowDirection key="popoverArrowDirection" up="YES" down="YES" left="YES" right="YES"/>
                                        </segue>
                                    </connections>
                                </barButtonItem>
                            </navigationItem>
                        </tableViewController>
                    </objects>
                </scene>
                <scene sceneID="22">
                    <objects>
                        <placeholder placeholderIdentifier="IBFirstResponder" id="23" sceneMemberID="firstResponder"/>
                        <viewController id="21" customClass="DetailViewController" title="Detail" sceneMemberID="viewController">
                            <view key="view" contentMode="scaleToFill" id="24"/>
                            <connections>
                                <segue destination="31" kind="modal" identifier="edit" modalPresentationStyle="formSheet" modalTransitionStyle="flipHorizontal" animates="NO" id="25"/>
                            </connections>
                        </viewController>
                    </objects>
                </scene>
                <scene sceneID="32">
                    <objects>
                        <placeholder placeholderIdentifier="IBFirstResponder" id="33" sceneMemberID="firstResponder"/>
                        <viewController id="31" customClass="EditViewController" sceneMemberID="viewController">
                            <view key="view" contentMode="scaleToFill" id="34"/>
                        </viewController>
                    </objects>
                </scene>
            </scenes>
            <classes>
                <class className="MasterViewController" superclassName="UITableViewController">
                    <source key="sourceIdentifier" type="project" relativePath="./Classes/MasterViewController.h"/>
                </class>
            </classes>
            <simulatedMetricsContainer key="defaultSimulatedMetrics">
                <simulatedStatusBarMetrics key="statusBar" statusBarStyle="blackTranslucent"/>
            </simulatedMetricsContainer>
        </document>
        """

    @Test("version 1.1 (iPad): split relationships, replace, popover with an arrow-direction child, modal with styles")
    func version11() throws {
        let storyboard = try parse(Self.version11)
        #expect(storyboard.documentVersion == "1.1")
        #expect(storyboard.targetRuntime == "iOS.CocoaTouch.iPad")
        #expect(storyboard.initialSceneID == "5")
        #expect(storyboard.scenes.map(\.id) == ["5", "12", "21", "31"])
        #expect(storyboard.scenes.map(\.kind) == [.split, .plain, .plain, .plain])
        #expect(storyboard.segues(from: "5").compactMap(\.relationship) == ["masterViewController", "detailViewController"])
        #expect(storyboard.segue("17")?.kind == "replace")
        let popover = try #require(storyboard.segue("20"))
        #expect(popover.kind == "popover" && popover.sourceID == "12" && popover.anchorBarButtonItemID == "19")
        let modal = try #require(storyboard.segue("25"))
        #expect(modal.kind == "modal" && modal.presentationStyle == "formSheet" && modal.transitionStyle == "flipHorizontal" && !modal.animates)
        #expect(storyboard.scene("12")?.title == "Master")
        #expect(storyboard.scene("21")?.title == "Detail")
        #expect(storyboard.scenes.allSatisfy { $0.unwindActions.isEmpty })
    }

    /// An Xcode 4.5 (iOS 6) storyboard: unwind segues, and `<classes>` declaring the unwind
    /// actions (one with `candidateClass`, one only named by a segue, one inherited).
    static let version20 = """
        <?xml version="1.0" encoding="UTF-8" standalone="no"?>
        <document type="com.apple.InterfaceBuilder3.CocoaTouch.Storyboard.XIB" version="2.0" toolsVersion="3084" systemVersion="12E55" targetRuntime="iOS.CocoaTouch" propertyAccessControl="none" useAutolayout="YES" initialViewController="nav">
            <scenes>
                <scene sceneID="s-nav">
                    <objects>
                        <placeholder placeholderIdentifier="IBFirstResponder" id="fr1" sceneMemberID="firstResponder"/>
                        <navigationController definesPresentationContext="YES" id="nav" customClass="AppNavigationController" sceneMemberID="viewController">
                            <navigationBar key="navigationBar" contentMode="scaleToFill" id="bar"/>
                            <connections>
                                <segue destination="list" kind="relationship" relationship="rootViewController" id="root"/>
                            </connections>
                        </navigationController>
                    </objects>
                </scene>
                <scene sceneID="s-list">
                    <objects>
                        <placeholder placeholderIdentifier="IBFirstResponder" id="fr2" sceneMemberID="firstResponder"/>
                        <tableViewController storyboardIdentifier="List" id="list" customClass="ListViewController" sceneMemberID="viewController">
                            <tableView key="view" id="tv">
                                <prototypes>
                                    <tableViewCell id="cell">
                                        <connections>
                                            <segue destination="add" kind="push" identifier="show" id="push1"/>
                                        </connections>
                                    </tableViewCell>
                                </prototypes>
                            </tableView>
                            <navigationItem key="navigationItem" id="ni">
                                <string key="title">All
        the items</string>
                            </navigationItem>
                        </tableViewController>
                    </objects>
                </scene>
                <scene sceneID="s-add">
                    <objects>
                        <placeholder placeholderIdentifier="IBFirstResponder" id="fr3" sceneMemberID="firstResponder"/>
                        <viewController id="add" customClass="AddViewController" sceneMemberID="viewController">
                            <view key="view" id="v">
                                <subviews>
                                    <button id="done">
                                        <connections>
                                            <segue destination="exit3" kind="unwind" identifier="done" unwindAction="done:" id="u1"/>
                                        </connections>
                                    </button>
                                </subviews>
                            </view>
                            <connections>
                                <segue destination="exit3" kind="unwind" unwindAction="unwindToList:" id="u2"/>
                            </connections>
                        </viewController>
                        <exit id="exit3" sceneMemberID="exit"/>
                    </objects>
                </scene>
            </scenes>
            <classes>
                <class className="BaseListViewController" superclassName="UITableViewController">
                    <source key="sourceIdentifier" type="project" relativePath="./Classes/BaseListViewController.h"/>
                    <relationships>
                        <relationship kind="action" name="refresh:" candidateClass="UIRefreshControl"/>
                        <relationship kind="action" name="unwindToList:" candidateClass="UIStoryboardSegue"/>
                        <relationship kind="action" name="done:"/>
                        <relationship kind="outlet" name="tableView" candidateClass="UITableView"/>
                    </relationships>
                </class>
                <class className="ListViewController" superclassName="BaseListViewController">
                    <source key="sourceIdentifier" type="project" relativePath="./Classes/ListViewController.h"/>
                    <relationships>
                        <relationship kind="action" name="unwindFromSettings:" candidateClass="UIStoryboardSegue"/>
                    </relationships>
                </class>
                <class className="AddViewController" superclassName="UIViewController">
                    <source key="sourceIdentifier" type="project" relativePath="./Classes/AddViewController.h"/>
                </class>
            </classes>
            <inferredMetricsTieBreakers>
                <segue reference="push1"/>
            </inferredMetricsTieBreakers>
        </document>
        """

    @Test("version 2.0: unwind actions of <classes> (candidateClass UIStoryboardSegue, named by a segue, inherited) fill the scene")
    func version20UnwindActions() throws {
        let storyboard = try parse(Self.version20)
        #expect(storyboard.documentVersion == "2.0")
        let list = try #require(storyboard.scene("list"))
        #expect(list.unwindActions == ["unwindFromSettings:", "unwindToList:", "done:"])
        #expect(list.title == "All\nthe items")
        #expect(list.storyboardID == "List")
        #expect(storyboard.scene("add")?.unwindActions == [])
        let navigation = try #require(storyboard.scene("nav"))
        #expect(navigation.kind == .navigation && navigation.className == "AppNavigationController" && navigation.definesContext)
        #expect(storyboard.segues.map(\.id) == ["root", "push1", "u1", "u2"])
        let done = try #require(storyboard.segue("u1"))
        #expect(done.sourceID == "add" && done.destinationID == nil && done.exitID == "exit3" && done.senderElement == "button")
        #expect(storyboard.segue("u2")?.senderElement == nil)
    }

    @Test("top-level objects beside the controller, same-file references, hosting and alert controllers, nested and tie-breaker segues")
    func rareConstructs() throws {
        let text = """
            <?xml version="1.0" encoding="UTF-8"?>
            <document type="com.apple.InterfaceBuilder3.CocoaTouch.Storyboard.XIB" version="3.0" targetRuntime="AppleTV">
                <scenes>
                    <scene sceneID="s1">
                        <objects>
                            <placeholder placeholderIdentifier="IBFirstResponder" id="fr1" userLabel="First Responder" sceneMemberID="firstResponder"/>
                            <viewController id="home" sceneMemberID="viewController">
                                <view key="view" id="v1">
                                    <subviews>
                                        <containerView id="slot1"><connections><segue destination="child" kind="embed" id="e1"/></connections></containerView>
                                        <view id="wrap">
                                            <subviews>
                                                <containerView id="slot2"><connections><segue destination="hosted" kind="embed" identifier="swiftui" id="e2"/></connections></containerView>
                                            </subviews>
                                        </view>
                                        <button id="b1">
                                            <connections>
                                                <segue destination="ref" kind="show" identifier="more" id="show1">
                                                    <segue key="commit" inheritsFrom="parent" id="c1"/>
                                                    <segue key="preview" inheritsFrom="commit" id="p1"/>
                                                </segue>
                                            </connections>
                                        </button>
                                    </subviews>
                                </view>
                            </viewController>
                            <searchDisplayController id="sdc"/>
                            <swipeGestureRecognizer direction="left" id="swipe">
                                <connections>
                                    <segue destination="alert" kind="custom" customClass="FadeSegue" customModule="App" id="custom1"/>
                                </connections>
                            </swipeGestureRecognizer>
                        </objects>
                    </scene>
                    <scene sceneID="s2">
                        <objects>
                            <viewController storyboardIdentifier="Child" id="child" sceneMemberID="viewController"/>
                        </objects>
                    </scene>
                    <scene sceneID="s3">
                        <objects>
                            <hostingController id="hosted" sceneMemberID="viewController"/>
                        </objects>
                    </scene>
                    <scene sceneID="s4">
                        <objects>
                            <viewControllerPlaceholder referencedIdentifier="Child" id="ref" sceneMemberID="viewController"/>
                        </objects>
                    </scene>
                    <scene sceneID="s5">
                        <objects>
                            <viewController id="alert" customClass="UIAlertController" sceneMemberID="viewController"/>
                        </objects>
                    </scene>
                    <scene sceneID="s6">
                        <objects>
                            <view contentMode="scaleToFill" id="loose"><connections><segue destination="child" kind="show" id="orphan"/></connections></view>
                        </objects>
                    </scene>
                </scenes>
                <inferredMetricsTieBreakers>
                    <segue reference="show1"/>
                </inferredMetricsTieBreakers>
            </document>
            """
        let storyboard = try parse(text, path: "/virtual/Base.lproj/Home.storyboard")
        #expect(storyboard.name == "Home")
        #expect(storyboard.targetRuntime == "AppleTV")
        #expect(storyboard.initialSceneID == nil)
        #expect(storyboard.scenes.map(\.id) == ["home", "child", "hosted", "ref", "alert"])
        #expect(storyboard.scenes.map(\.kind) == [.plain, .plain, .hosting, .placeholder, .alert])
        #expect(storyboard.scene("hosted")?.className == "UIHostingController")
        let home = try #require(storyboard.scene("home"))
        #expect(home.containerViewIDs == ["slot1", "slot2"])
        // A scene holding only a view has no controller: its segue has no source and is dropped.
        #expect(storyboard.segues.map(\.id) == ["e1", "e2", "show1", "custom1"])
        #expect(storyboard.segue("e1")?.containerViewID == "slot1")
        #expect(storyboard.segue("e2")?.containerViewID == "slot2")
        #expect(storyboard.segue("show1")?.containerViewID == nil)
        let custom = try #require(storyboard.segue("custom1"))
        #expect(custom.sourceID == "home" && custom.customClass == "FadeSegue" && custom.senderElement == "swipeGestureRecognizer")

        let placeholder = try #require(storyboard.scene("ref"))
        #expect(placeholder.reference == StoryboardScene.Reference(storyboardName: nil, referencedIdentifier: "Child"))
        let (target, scene) = try #require(StoryboardSet([storyboard]).resolve(placeholder, in: storyboard))
        #expect(target.name == "Home" && scene.id == "child")
    }

    @Test("references that chain through another reference are followed; a circle of references resolves to nothing")
    func referenceChainsAndCircles() throws {
        func placeholder(_ id: String, _ storyboard: String?, _ identifier: String?) -> StoryboardScene {
            StoryboardScene(
                id: id, element: "viewControllerPlaceholder", className: "UIViewController", kind: .placeholder,
                reference: StoryboardScene.Reference(storyboardName: storyboard, referencedIdentifier: identifier))
        }
        var a = Storyboard(
            name: "A", path: "A.storyboard", documentVersion: "3.0", targetRuntime: nil, initialSceneID: nil,
            scenes: [placeholder("toB", "B", nil), placeholder("toC", "C", "Loop")], segues: [])
        a.scenes[1].storyboardID = "Back"
        let b = Storyboard(
            name: "B", path: "B.storyboard", documentVersion: "3.0", targetRuntime: nil, initialSceneID: "start",
            scenes: [
                placeholder("start", "B", "Real"), StoryboardScene(id: "real", element: "viewController", className: "RealViewController", storyboardID: "Real", kind: .plain),
            ],
            segues: [])
        var c = Storyboard(
            name: "C", path: "C.storyboard", documentVersion: "3.0", targetRuntime: nil, initialSceneID: nil,
            scenes: [placeholder("loop", "A", "Back"), placeholder("toInitialOfA", "A", nil)], segues: [])
        c.scenes[0].storyboardID = "Loop"
        let set = StoryboardSet([a, b, c])
        // A → B's initial, itself a reference to B's "Real".
        let (board, scene) = try #require(set.resolve(a.scenes[0], in: a))
        #expect(board.name == "B" && scene.id == "real")
        // A's "toC" → C's "Loop" → A's "Back", which is "toC" again.
        #expect(set.resolve(a.scenes[1], in: a) == nil)
        // A has no initial controller.
        #expect(set.resolve(c.scenes[1], in: c) == nil)
        #expect(set.storyboard(named: "C")?.path == "C.storyboard")
        #expect(set.storyboard(named: "D") == nil)
    }

    @Test("the element's UIKit class and the kind it implies")
    func defaultClasses() {
        #expect(StoryboardScene.defaultClassName(forElement: "tableViewController") == "UITableViewController")
        #expect(StoryboardScene.defaultClassName(forElement: "avPlayerViewController") == "AVPlayerViewController")
        #expect(StoryboardScene.defaultClassName(forElement: "glkViewController") == "GLKViewController")
        #expect(StoryboardScene.defaultClassName(forElement: "fancyController") == "UIFancyController")
        #expect(StoryboardScene.Kind(element: "navigationController", className: "ThemedNavigationController") == .navigation)
        #expect(StoryboardScene.Kind(element: "viewController", className: "UIAlertController") == .alert)
        #expect(StoryboardScene.Kind(element: "pageViewController", className: "Pager") == .page)
        #expect(StoryboardScene.Kind(element: "viewController", className: "Home") == .plain)
    }

    @Test("DOT output: clusters, the initial scene marked, edge styles by kind, quoting")
    func dot() throws {
        var storyboard = try parse(Self.version20, path: "/virtual/Main.storyboard")
        storyboard.scenes[1].className = "List\"Quoted\""
        let dot = StoryboardDOTWriter.render(StoryboardSet([storyboard]))
        #expect(dot.hasPrefix("digraph storyboards {\n"))
        #expect(dot.hasSuffix("}\n"))
        #expect(dot.contains(#"subgraph "cluster_0" {"#))
        #expect(dot.contains(#""0:nav" [label="AppNavigationController\n[navigation]", peripheries=2];"#), "\(dot)")
        #expect(dot.contains(#""0:list" [label="List\"Quoted\"\nid: List"];"#), "\(dot)")
        #expect(dot.contains(#""0:initial" -> "0:nav";"#))
        #expect(dot.contains(#""0:nav" -> "0:list" [label="rootViewController", style=bold, color=blue];"#))
        #expect(dot.contains(#""0:list" -> "0:add" [label="push\nshow"];"#))
        #expect(dot.contains(#""0:add" -> "0:unwind:done:" [style=dotted, label="unwind\ndone"];"#))
    }
}
