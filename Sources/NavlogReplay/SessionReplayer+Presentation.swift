import NavlogEvents

/// Presentation and dismissal (R3–R7).
extension SessionReplayer {
    /// A `present` event.
    mutating func presentEvent(_ body: StoredBody) {
        guard let source = controller(body, .from), let vc = controller(body, .vc) else { return }
        let style = requestedStyle(body.field(.style)?.bytes, of: vc, alertStyle: body.field(.alertStyle)?.bytes)
        present(vc, from: source, style: style, anchored: hasAnchor(body.field(.anchor)))
    }

    /// The requested style: the event's, else what UIKit uses for the controller (an alert is
    /// `custom`, an action sheet on an iPad or a Mac is a popover, R6), else `automatic`.
    func requestedStyle(_ style: UnsafeRawBufferPointer?, of vc: Int32, alertStyle: UnsafeRawBufferPointer?) -> PresentationStyle {
        if let style, let parsed = PresentationStyle(style) { return parsed }
        guard kind(of: vc) == .alert else { return .automatic }
        let actionSheet = alertStyle.map { $0.elementsEqual("actionSheet".utf8) } ?? false
        return actionSheet && (info.idiom == .pad || info.idiom == .mac) ? .popover : .custom
    }

    /// Whether an `anchor` names a bar button item or a source view (R6).
    func hasAnchor(_ anchor: StoredValue?) -> Bool {
        guard let anchor else { return false }
        return anchor.member(.barButtonItem) != nil || anchor.member(.sourceView) != nil
    }

    /// R3: present `vc` from `source`.
    @discardableResult
    mutating func present(_ vc: Int32, from source: Int32, style: PresentationStyle, anchored: Bool) -> Resolution {
        guard hierarchy.isAttached(source) else {
            raise(
                .presentDetached, rule: "R3a", [source, vc],
                "\(name(source)) presents \(name(vc)) but is not attached to a window: nothing happens (Attempt to present on a view controller whose view is not in the window hierarchy)."
            )
            return .ignored
        }
        let compact = horizontal == .compact
        if style == .popover && !compact && !anchored {
            raise(
                .popoverWithoutAnchor, rule: "R6", [source, vc],
                "\(name(vc)) is presented as a popover in a regular width without a bar button item or source view: UIKit raises; nothing is presented.")
            return .ignored
        }
        let presenter = actualPresenter(for: source, style: style)
        if hierarchy[presenter].presented >= 0 {
            let existing = hierarchy[presenter].presented
            raise(
                .presentWhilePresenting, rule: "R3c", [presenter, vc, existing],
                "Attempt to present \(name(vc)) on \(name(presenter)), which is already presenting \(name(existing)): nothing happens.")
            return .ignored
        }
        if hierarchy.isAttached(vc) {
            raise(.presentAttached, rule: "R3d", [vc, presenter], "\(name(vc)) is presented while it is already attached: nothing happens.")
            return .ignored
        }
        guard hierarchy.place(vc, in: .presented(by: presenter, style: style)) else {
            raise(.presentAttached, rule: "H3", [vc, presenter], "\(name(vc)) would present itself: nothing happens.")
            return .ignored
        }
        return .present(
            presenter: ControllerHandle(index: presenter), vc: ControllerHandle(index: vc), style: style,
            effectiveStyle: style.adapted(horizontallyCompact: compact))
    }

    /// R3b: the controller that actually presents.
    func actualPresenter(for source: Int32, style: PresentationStyle) -> Int32 {
        if style.usesCurrentContext {
            var definer: Int32 = -1
            hierarchy.forEachOnParentChain(of: source) { handle in
                if controllers[ControllerHandle(index: handle)].definesContext {
                    definer = handle
                    return false
                }
                return true
            }
            if definer >= 0 { return definer }
        }
        return hierarchy.contextRoot(of: source)
    }

    /// R7: the controller whose presentation `dismiss()` called on `receiver` ends: the nearest
    /// on its parent chain that presents something, else the presenter of its context root;
    /// -1 when it neither presents nor is presented.
    func dismissalPresenter(of receiver: Int32) -> Int32 {
        var presenter: Int32 = -1
        hierarchy.forEachOnParentChain(of: receiver) { handle in
            if hierarchy[handle].presented >= 0 {
                presenter = handle
                return false
            }
            return true
        }
        if presenter >= 0 { return presenter }
        let root = hierarchy.contextRoot(of: receiver)
        return hierarchy[root].placement == .presented ? hierarchy[root].presenter : -1
    }

    /// R7: `dismiss()` called on `receiver`, whose presentation `presenter`
    /// (``dismissalPresenter(of:)``) ends.
    mutating func dismiss(from receiver: Int32, presenter: Int32) {
        guard presenter >= 0 else {
            return raise(.dismissNothing, rule: "R7", [receiver], "dismiss on \(name(receiver)), which neither presents nor is presented: nothing happens.")
        }
        hierarchy.dismiss(presentedBy: presenter)
    }
}
