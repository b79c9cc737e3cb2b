import NavlogStoryboard
import Testing

/// Real storyboards whose graphs were read by hand: the parser must find the same.
@Suite("known answers on real storyboards")
struct KnownAnswerTests {
    /// CS193P's EmojiArt: a document browser, an embed, a popover from a bar button item,
    /// an unwind, and an identifier used by two segues.
    @Test("EmojiArt: initial scene, embed container, bar-button popover anchor, unwind action, reused identifier")
    func emojiArt() throws {
        let storyboard = try Corpus.load(Corpus.emojiArt)
        #expect(storyboard.documentVersion == "3.0")
        #expect(storyboard.targetRuntime == "iOS.CocoaTouch")
        let initial = try #require(storyboard.initialSceneID.flatMap(storyboard.scene))
        #expect(initial.id == "BYZ-38-t0r")
        #expect(initial.className == "DocumentBrowserViewController")
        #expect(initial.module == "EmojiArt")
        #expect(initial.kind == .plain)

        let editor = try #require(storyboard.scene("7BV-pG-o5f"))
        #expect(editor.className == "EmojiArtViewController")
        #expect(editor.containerViewIDs == ["buY-4k-VKt"])
        let embed = try #require(storyboard.segue("D1C-kQ-WiX"))
        #expect(embed.kind == "embed")
        #expect(embed.sourceID == "7BV-pG-o5f")
        #expect(embed.destinationID == "iQD-bq-84X")
        #expect(embed.containerViewID == "buY-4k-VKt")
        #expect(embed.identifier == "Embed Document Info")
        #expect(embed.senderElement == "containerView")

        let popover = try #require(storyboard.segue("dlw-nn-BN6"))
        #expect(popover.kind == "popoverPresentation")
        #expect(popover.sourceID == "7BV-pG-o5f")  // from a bar button item of its navigation item
        #expect(popover.anchorBarButtonItemID == "yCK-fT-1Nj")
        #expect(popover.anchorViewID == nil)
        #expect(popover.senderElement == "barButtonItem" && popover.senderID == "yCK-fT-1Nj")
        let sheet = try #require(storyboard.segue("Zbn-dZ-Hfs"))
        #expect(sheet.kind == "presentation" && sheet.presentationStyle == "formSheet")

        let unwind = try #require(storyboard.segue("xei-Uo-aPB"))
        #expect(unwind.kind == "unwind")
        #expect(unwind.sourceID == "XS6-Te-BYJ")
        #expect(unwind.destinationID == nil)
        #expect(unwind.unwindAction == "closeBySegue:")
        #expect(unwind.exitID == "Vfr-yJ-rEY")

        let navigation = try #require(storyboard.scene("ebB-HC-mbB"))
        #expect(navigation.kind == .navigation && navigation.className == "UINavigationController" && navigation.storyboardID == "DocumentMVC")
        #expect(storyboard.segues(from: "ebB-HC-mbB").map(\.relationship) == ["rootViewController"])

        let counts = StoryboardStatistics(storyboard)
        #expect(counts.identifiersReused == 1)  // "Show Document Info", on the popover and the form sheet
        #expect(counts.identifiersMissing == 1)  // the unwind
    }

    /// Loop's Naterade: a tab bar of navigation controllers, storyboard references into
    /// frameworks' storyboards, popovers anchored to views, a custom segue class on a
    /// popover, and a table view controller's segues on itself and on a cell.
    @Test("Naterade: view-anchored popovers with a custom class, references with bundle ids, tab relationships")
    func naterade() throws {
        let storyboard = try Corpus.load(Corpus.naterade)
        let initial = try #require(storyboard.initialSceneID.flatMap(storyboard.scene))
        #expect(initial.kind == .tab && initial.className == "UITabBarController")
        #expect(storyboard.segues(from: initial.id).map(\.relationship) == Array(repeating: "viewControllers", count: 4))

        let bolus = try #require(storyboard.segue("Ff6-iD-qGO"))
        #expect(bolus.kind == "popoverPresentation")
        #expect(bolus.identifier == "bolus")
        #expect(bolus.sourceID == "1zR-tC-i50")
        #expect(bolus.anchorViewID == "lM0-sw-pZ9")
        #expect(bolus.anchorBarButtonItemID == nil)
        #expect(bolus.customClass == "PopoverInNavigationControllerSegue")

        let carbs = try #require(storyboard.scene("Td9-bv-106"))
        #expect(carbs.kind == .placeholder)
        #expect(carbs.element == "viewControllerPlaceholder")
        #expect(
            carbs.reference
                == StoryboardScene.Reference(storyboardName: "CarbKit", referencedIdentifier: "CarbEntryEditViewController", bundleIdentifier: "com.loudnate.CarbKit"))
        let insulin = try #require(storyboard.scene("a8v-ef-RZZ"))
        #expect(insulin.reference?.storyboardName == "InsulinKit" && insulin.reference?.referencedIdentifier == nil)

        // A segue on the controller's own connections has no sender; one on a cell has the cell.
        #expect(storyboard.segue("F2v-na-5IP")?.senderElement == nil)
        #expect(storyboard.segue("eCr-GB-Kcu")?.senderElement == "tableViewCell")
        #expect(storyboard.segue("Nq4-5L-c85")?.unwindAction == "unwindFromBolusViewController:")
    }

    /// Hacker News reader of 2013: a version 2.0 document with SWRevealViewController's
    /// custom segues, a push, and an accessory-button trigger.
    @Test("Hackers (version 2.0): custom segue classes, accessory trigger, definesPresentationContext, <classes>")
    func hackersVersion2() throws {
        let storyboard = try Corpus.load(Corpus.hackers)
        #expect(storyboard.documentVersion == "2.0")
        #expect(storyboard.initialSceneID == "131-3G-RgI")
        #expect(storyboard.scene("131-3G-RgI")?.className == "SWRevealViewController")
        let front = try #require(storyboard.segue("Dta-wT-daI"))
        #expect(front.kind == "custom" && front.customClass == "SWRevealViewControllerSegue" && front.identifier == "sw_front")
        #expect(front.sourceID == "131-3G-RgI" && front.destinationID == "kHE-jZ-QLL")
        #expect(storyboard.segue("Nzg-uU-YLt")?.trigger == "accessoryAction")
        #expect(storyboard.segue("JbF-YJ-KnY")?.kind == "push")
        #expect(storyboard.scene("kHE-jZ-QLL")?.definesContext == true)
        #expect(storyboard.scene("LYY-JJ-fbY")?.definesContext == true)
        #expect(storyboard.scene("4WW-lp-g4T")?.definesContext == false)
        // Its <classes> list no unwind actions (the app has no unwind segue).
        #expect(storyboard.scenes.allSatisfy { $0.unwindActions.isEmpty })
        // The tie-breaker `<segue reference="LV5-XZ-Q4O"/>` is not a second segue.
        #expect(storyboard.segues.filter { $0.id == "LV5-XZ-Q4O" }.count == 1)
    }

    @Test("AltStore: the 3D Touch commit/preview segues nested in a show segue are left out")
    func nestedPreviewSegues() throws {
        let storyboard = try Corpus.load(Corpus.altStore)
        let show = try #require(storyboard.segue("cnd-KK-o60"))
        #expect(show.kind == "show" && show.identifier == "showApp" && show.destinationID == "0V6-N4-hTO")
        #expect(show.sourceID == "hv7-Ar-voT")
        #expect(show.senderElement == "collectionViewCell" && show.senderID == "kMp-ym-2yu")
        #expect(storyboard.segue("YdR-Ct-SlK") == nil)
        #expect(storyboard.segue("GSg-SY-gai") == nil)
        #expect(storyboard.scene("49e-Tb-3d3")?.presentationStyle == "fullScreen")
        #expect(storyboard.scene("faz-B4-Sub")?.kind == .navigation)  // a UINavigationController subclass
        #expect(storyboard.scene("faz-B4-Sub")?.className == "ForwardingNavigationController")
    }

    @Test("iOS 10 Sampler: an unwind segue on a tap gesture recognizer beside the controller comes from that controller")
    func segueOnGestureRecognizer() throws {
        let storyboard = try Corpus.load(Corpus.previewInteraction)
        let unwind = try #require(storyboard.segue("fZg-4L-hhE"))
        #expect(unwind.sourceID == "4Jh-JS-Npb")
        #expect(unwind.senderElement == "tapGestureRecognizer" && unwind.senderID == "AwV-am-a8b")
        #expect(unwind.unwindAction == "unwindActionWithSegue:")
        let pop = try #require(storyboard.segue("MrM-EZ-QKS"))
        #expect(pop.presentationStyle == "overCurrentContext" && pop.transitionStyle == "crossDissolve")
        #expect(storyboard.scenes.count == 2)
    }

    /// Habitica splits its app into storyboards that reference each other.
    @Test("Habitica: references resolve across Main, Social and Intro; hosting controllers are leaf scenes")
    func habiticaReferences() throws {
        let main = try Corpus.load(Corpus.habiticaMain, as: "Main")
        let social = try Corpus.load(Corpus.habiticaSocial, as: "Social")
        let intro = try Corpus.load(Corpus.habiticaIntro, as: "Intro")
        let set = StoryboardSet([main, social, intro])

        let profile = try #require(main.scene("x5n-fS-qd9"))
        #expect(profile.reference == StoryboardScene.Reference(storyboardName: "Social", referencedIdentifier: "UserProfileNavController"))
        let (profileBoard, profileScene) = try #require(set.resolve(profile, in: main))
        #expect(profileBoard.name == "Social")
        #expect(profileScene.id == "oLT-m4-I14" && profileScene.kind == .navigation)

        let gems = try #require(social.scene("HSy-Iu-F74"))
        let (gemsBoard, gemsScene) = try #require(set.resolve(gems, in: social))
        #expect(gemsBoard.name == "Main" && gemsScene.id == "pUF-pN-Tcq")
        #expect(gemsScene.className == "ThemedNavigationController" && gemsScene.kind == .navigation)

        let tabs = try #require(intro.scene("qul-kf-4Gi"))
        let (_, tabScene) = try #require(set.resolve(tabs, in: intro))
        #expect(tabScene.id == "8YX-ce-x5E" && tabScene.kind == .tab)
        #expect(tabScene.restorationID == "MainTabBarController")  // useStoryboardIdentifierAsRestorationIdentifier

        // "Support" (no identifier: its initial controller) is not loaded.
        let support = try #require(main.scene("A14-ZR-jzj"))
        #expect(support.reference?.referencedIdentifier == nil)
        #expect(set.resolve(support, in: main) == nil)
        // A scene that is not a reference resolves to nothing.
        #expect(set.resolve(tabScene, in: main) == nil)

        let hosting = try #require(main.scene("QrZ-zf-ehm"))
        #expect(hosting.kind == .hosting && hosting.element == "hostingController" && hosting.className == "GiftSubscriptionViewController")
        #expect(main.segues(from: hosting.id).isEmpty)
        #expect(main.scene("mbi-ct-92m")?.kind == .hosting)

        let references = set.resolvedReferences()
        #expect(references.contains(StoryboardSet.ResolvedReference(storyboardIndex: 0, placeholderID: "x5n-fS-qd9", targetStoryboardIndex: 1, targetSceneID: "oLT-m4-I14")))
        #expect(references.contains(StoryboardSet.ResolvedReference(storyboardIndex: 2, placeholderID: "qul-kf-4Gi", targetStoryboardIndex: 0, targetSceneID: "8YX-ce-x5E")))
    }
}
