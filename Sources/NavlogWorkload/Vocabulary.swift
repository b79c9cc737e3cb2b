// The screens, containers, presentations, alerts and analytics marks the simulated apps use.

/// A presentation style, as named in `present` and `segue`.
enum PresentationStyle: Sendable {
    case fullScreen, pageSheet, formSheet, currentContext, overFullScreen, overCurrentContext, popover, automatic

    /// The wire name.
    var name: StaticString {
        switch self {
        case .fullScreen: "fullScreen"
        case .pageSheet: "pageSheet"
        case .formSheet: "formSheet"
        case .currentContext: "currentContext"
        case .overFullScreen: "overFullScreen"
        case .overCurrentContext: "overCurrentContext"
        case .popover: "popover"
        case .automatic: "automatic"
        }
    }

    /// Whether UIKit removes the presenter's views (and so sends it `viewWillDisappear`).
    var hidesPresenter: Bool { self == .fullScreen || self == .currentContext }

    /// Whether the user can swipe the presentation down (an interactive dismissal).
    var isSheet: Bool { self == .pageSheet || self == .formSheet || self == .automatic }
}

/// Where a popover (or an iPad action sheet) points.
enum AnchorSpec: Sendable {
    case none
    case barButton(StaticString)
    case sourceView(StaticString)
}

/// A controller class and what the simulated app does with it.
struct ControllerClass: Sendable {
    /// The class name.
    var name: StaticString
    /// The ref `kind` for containers and alerts, or empty.
    var kind: StaticString = ""
    /// True for app subclasses of UIKit containers, whose kind a reader cannot infer from the name.
    var kindRequired = false
    /// The storyboard identifier, or empty.
    var sbid: StaticString = ""
    /// The navigation title, or empty.
    var title: StaticString = ""
    /// The unwind action it implements (`unwindToX:`), or empty.
    var unwindAction: StaticString = ""
    /// The identifier of the unwind segue that targets it, or empty.
    var unwindSegue: StaticString = ""
    /// The identifier of the storyboard segue that shows it, or empty.
    var segue: StaticString = ""
    /// The classes embedded in its container view (more than one: the screen swaps between them).
    var embeds: [Int] = []
    /// The container view (slot) of the embedded child.
    var slot: StaticString = ""
    /// The identifier of its embed segue.
    var embedSegue: StaticString = ""
    /// Whether its first mention says `definesContext: true`.
    var definesContext = false
    /// The classes its screen usually pushes next (empty: any of the catalog's pushes).
    var next: [Int] = []
}

/// Something an app presents modally.
struct Presentable: Sendable {
    /// The presented content class.
    var content: Int
    /// Whether it is wrapped in a `UINavigationController`.
    var inNavigation: Bool
    /// The style on an iPhone.
    var phoneStyle: PresentationStyle
    /// The style on an iPad.
    var padStyle: PresentationStyle
    /// The transition style, or empty for the default.
    var transition: StaticString = ""
    /// The popover anchor.
    var anchor: AnchorSpec = .none
    /// The segue identifier when it comes from the storyboard.
    var segue: StaticString
    /// What the presented navigation controller can push.
    var pushes: [Int] = []
}

/// One analytics property generator.
enum PropValue: Sendable {
    case strings([StaticString])
    case integer(Int, Int)
    case money(Int, Int)
    case tenths(Int, Int)
    case flag(Double)
    case identifier(StaticString, Int)
}

/// An analytics `mark` and its properties.
struct MarkTemplate: Sendable {
    /// The mark name.
    var name: StaticString
    /// Its properties, in order.
    var props: [(key: StaticString, value: PropValue)]
}

/// The vocabulary of one kind of app.
struct Catalog: Sendable {
    var tabBar: Int
    var split: Int
    var tabRoots: [Int]
    var navigationRoot: Int
    var splitPrimaryRoot: Int
    var emptyDetail: Int
    var details: [Int]
    var pushes: [Int]
    var presentables: [Presentable]
    var alertTitles: [StaticString]
    var sheetTitles: [StaticString]
    var marks: [MarkTemplate]
}

/// All classes and catalogs, built once.
final class Vocabulary: Sendable {
    /// Well-known class indices.
    static let navigation = 0, tabBar = 1, split = 2, page = 3, alert = 4

    let classes: [ControllerClass]
    let catalogs: [Catalog]  // indexed like WorkloadApp.Catalog.allCases

    /// The catalog of an app kind.
    func catalog(_ kind: WorkloadApp.Catalog) -> Catalog {
        switch kind {
        case .recipes: catalogs[0]
        case .shopping: catalogs[1]
        case .mail: catalogs[2]
        case .fitness: catalogs[3]
        }
    }

    /// The shared vocabulary.
    static let shared = Vocabulary()

    private init() {
        var list: [ControllerClass] = []
        var index: [String: Int] = [:]
        var pending: [(Int, [String], [String])] = []  // class, embeds, next

        func add(
            _ name: StaticString, kind: StaticString = "", kindRequired: Bool = false, sbid: StaticString = "",
            title: StaticString = "", unwind: StaticString = "", unwindSegue: StaticString = "",
            segue: StaticString = "", embeds: [String] = [], slot: StaticString = "", embedSegue: StaticString = "",
            definesContext: Bool = false, next: [String] = []
        ) {
            index[name.description] = list.count
            pending.append((list.count, embeds, next))
            list.append(
                ControllerClass(
                    name: name, kind: kind, kindRequired: kindRequired, sbid: sbid, title: title,
                    unwindAction: unwind, unwindSegue: unwindSegue, segue: segue, slot: slot,
                    embedSegue: embedSegue, definesContext: definesContext))
        }

        // UIKit containers first (indices fixed above).
        add("UINavigationController", kind: "navigation")
        add("UITabBarController", kind: "tab")
        add("UISplitViewController", kind: "split")
        add("UIPageViewController", kind: "page")
        add("UIAlertController", kind: "alert")
        add("MainTabBarController", kind: "tab", kindRequired: true, sbid: "MainTabBar")
        add("RootSplitViewController", kind: "split", kindRequired: true, sbid: "RootSplit")
        add("UIActivityViewController")
        add("SFSafariViewController")
        add("UIImagePickerController")
        add("QLPreviewController")
        add("EmptyDetailViewController", sbid: "EmptyDetail", title: "Nothing Selected")

        // Shared screens.
        add("SearchViewController", sbid: "Search", title: "Search", segue: "showSearch")
        add(
            "ProfileViewController", sbid: "Profile", title: "Profile", unwind: "unwindToProfile:",
            unwindSegue: "unwindToProfile", segue: "showProfile", embeds: ["ProfileHeaderViewController"],
            slot: "headerContainer", embedSegue: "embedProfileHeader",
            next: ["SettingsViewController", "AboutViewController"])
        add("ProfileHeaderViewController")
        add(
            "SettingsViewController", sbid: "Settings", title: "Settings", unwind: "unwindToSettings:",
            unwindSegue: "unwindToSettings", segue: "showSettings",
            next: ["NotificationSettingsViewController", "AboutViewController", "PrivacySettingsViewController"])
        add("NotificationSettingsViewController", title: "Notifications", segue: "showNotificationSettings")
        add("PrivacySettingsViewController", title: "Privacy", segue: "showPrivacy")
        add("AboutViewController", sbid: "About", title: "About", segue: "showAbout")

        // Recipes.
        add(
            "RecipeListViewController", sbid: "RecipeList", title: "Recipes", unwind: "unwindToRecipeList:",
            unwindSegue: "unwindToRecipeList", segue: "showRecipes",
            next: ["RecipeDetailViewController", "RecipeDetailViewController", "RecipeCollectionViewController"])
        add(
            "RecipeDetailViewController", sbid: "RecipeDetail", segue: "showRecipeDetail",
            embeds: ["RecipeHeaderViewController"], slot: "headerContainer", embedSegue: "embedRecipeHeader",
            next: [
                "IngredientListViewController", "StepByStepViewController", "ReviewsViewController",
                "AuthorProfileViewController",
            ])
        add("RecipeHeaderViewController")
        add(
            "IngredientListViewController", title: "Ingredients", segue: "showIngredients",
            next: ["ShoppingListViewController"])
        add(
            "StepByStepViewController", title: "Cook Mode", segue: "showSteps", embeds: ["UIPageViewController"],
            slot: "pageContainer", embedSegue: "embedSteps")
        add("ReviewsViewController", title: "Reviews", segue: "showReviews", next: ["AuthorProfileViewController"])
        add(
            "AuthorProfileViewController", sbid: "AuthorProfile", segue: "showAuthor",
            next: ["RecipeDetailViewController", "RecipeCollectionViewController"])
        add(
            "RecipeCollectionViewController", title: "Collection", segue: "showCollection",
            next: ["RecipeDetailViewController"])
        add(
            "SearchResultsViewController", title: "Results", segue: "showResults",
            next: ["RecipeDetailViewController"])
        add(
            "FavoritesViewController", sbid: "Favorites", title: "Favorites", unwind: "unwindToFavorites:",
            unwindSegue: "unwindToFavorites", next: ["RecipeDetailViewController"])
        add(
            "MealPlanViewController", title: "Meal Plan", segue: "showMealPlan",
            embeds: ["WeekPlanViewController", "MonthPlanViewController"], slot: "calendarContainer",
            embedSegue: "embedCalendar", definesContext: true,
            next: ["RecipeDetailViewController", "ShoppingListViewController"])
        add("WeekPlanViewController")
        add("MonthPlanViewController")
        add("ShoppingListViewController", title: "Shopping List", segue: "showShoppingList")
        add("AddRecipeViewController", sbid: "AddRecipe", title: "New Recipe")
        add(
            "IngredientPickerViewController", title: "Add Ingredient", segue: "pickIngredient",
            next: ["UnitPickerViewController"])
        add("UnitPickerViewController", title: "Unit", segue: "pickUnit")
        add("ImageViewerViewController", sbid: "ImageViewer")

        // Shopping.
        add(
            "HomeFeedViewController", sbid: "HomeFeed", title: "Home", unwind: "unwindToHome:",
            unwindSegue: "unwindToHome", next: ["ProductDetailViewController", "ProductListViewController"])
        add(
            "CategoryListViewController", sbid: "Categories", title: "Categories", segue: "showCategories",
            next: ["ProductListViewController"])
        add("ProductListViewController", segue: "showProducts", next: ["ProductDetailViewController"])
        add(
            "ProductDetailViewController", sbid: "ProductDetail", segue: "showProduct",
            embeds: ["UIPageViewController"], slot: "galleryContainer", embedSegue: "embedGallery",
            definesContext: true,
            next: ["ProductReviewsViewController", "ProductDetailViewController", "CartViewController"])
        add("ProductReviewsViewController", title: "Reviews", segue: "showProductReviews")
        add(
            "CartViewController", sbid: "Cart", title: "Cart", unwind: "unwindToCart:", unwindSegue: "unwindToCart",
            segue: "showCart", next: ["CheckoutViewController", "ProductDetailViewController"])
        add(
            "CheckoutViewController", sbid: "Checkout", title: "Checkout", segue: "showCheckout",
            next: ["ShippingAddressViewController", "PaymentMethodViewController", "OrderConfirmationViewController"])
        add(
            "ShippingAddressViewController", title: "Shipping", segue: "showShipping",
            next: ["PaymentMethodViewController"])
        add(
            "PaymentMethodViewController", title: "Payment", segue: "showPayment",
            next: ["OrderConfirmationViewController"])
        add(
            "OrderConfirmationViewController", title: "Thank You!", segue: "showConfirmation",
            next: ["OrderDetailViewController"])
        add(
            "OrderHistoryViewController", title: "Orders", segue: "showOrders",
            embeds: ["ActiveOrdersViewController", "PastOrdersViewController"], slot: "contentContainer",
            embedSegue: "embedOrders", next: ["OrderDetailViewController"])
        add("ActiveOrdersViewController")
        add("PastOrdersViewController")
        add("OrderDetailViewController", segue: "showOrder", next: ["ProductDetailViewController"])
        add(
            "AccountViewController", sbid: "Account", title: "Account", unwind: "unwindToAccount:",
            unwindSegue: "unwindToAccount",
            next: ["OrderHistoryViewController", "WishlistViewController", "SettingsViewController"])
        add("WishlistViewController", title: "Wishlist", segue: "showWishlist", next: ["ProductDetailViewController"])
        add("FilterViewController", sbid: "Filters", title: "Filters")
        add("SortOptionsViewController", sbid: "SortOptions")
        add("QuickAddToCartViewController")
        add("SizeGuideViewController", title: "Size Guide")
        add("CouponViewController", title: "Add Coupon")
        add("AddressFormViewController", title: "New Address", segue: "showAddressForm")

        // Mail.
        add(
            "MailboxListViewController", sbid: "Mailboxes", title: "Mailboxes", segue: "showMailboxes",
            next: ["MessageListViewController"])
        add(
            "MessageListViewController", sbid: "MessageList", title: "Inbox", unwind: "unwindToMessageList:",
            unwindSegue: "unwindToMessageList", segue: "showMailbox",
            next: ["MessageDetailViewController", "ThreadViewController"])
        add(
            "MessageDetailViewController", sbid: "MessageDetail", segue: "showMessage",
            embeds: ["AttachmentStripViewController"], slot: "attachmentsContainer", embedSegue: "embedAttachments",
            next: ["AttachmentPreviewViewController", "ContactDetailViewController"])
        add("AttachmentStripViewController")
        add("ThreadViewController", segue: "showThread", next: ["MessageDetailViewController"])
        add("AttachmentPreviewViewController", segue: "showAttachment")
        add(
            "ContactDetailViewController", sbid: "ContactDetail", segue: "showContact",
            next: ["MessageListViewController"])
        add("ComposeViewController", sbid: "Compose", title: "New Message")
        add("RecipientPickerViewController", title: "Add Recipient", segue: "showRecipients")
        add("FolderPickerViewController", title: "Move to…")

        // Fitness.
        add(
            "ActivityFeedViewController", sbid: "ActivityFeed", title: "Activity", unwind: "unwindToActivity:",
            unwindSegue: "unwindToActivity", next: ["WorkoutSummaryViewController", "TrailDetailViewController"])
        add(
            "TrailListViewController", sbid: "TrailList", title: "Trails", unwind: "unwindToTrails:",
            unwindSegue: "unwindToTrails", segue: "showTrails", next: ["TrailDetailViewController"])
        add(
            "TrailDetailViewController", sbid: "TrailDetail", segue: "showTrail", embeds: ["MapSnippetViewController"],
            slot: "mapContainer", embedSegue: "embedMap", next: ["MapViewController", "LeaderboardViewController"])
        add("MapSnippetViewController")
        add("MapViewController", title: "Map", segue: "showMap")
        add(
            "WorkoutSummaryViewController", segue: "showWorkout",
            embeds: ["HeartRateChartViewController", "PaceChartViewController"], slot: "chartContainer",
            embedSegue: "embedChart", next: ["MapViewController", "LeaderboardViewController"])
        add("HeartRateChartViewController")
        add("PaceChartViewController")
        add(
            "LeaderboardViewController", title: "Leaderboard", segue: "showLeaderboard",
            next: ["AuthorProfileViewController"])
        add(
            "WorkoutHistoryViewController", title: "History", segue: "showHistory",
            next: ["WorkoutSummaryViewController"])
        add("RecordWorkoutViewController", sbid: "RecordWorkout")
        add("MapOptionsViewController", sbid: "MapOptions")
        add("CreditsViewController", title: "Credits")

        // Presented forms shared by several apps.
        add("LoginViewController", sbid: "Login", title: "Sign In")
        add("SignUpViewController", title: "Create Account", segue: "showSignUp")
        add("ForgotPasswordViewController", title: "Reset Password", segue: "showForgotPassword")
        add("EditProfileViewController", sbid: "EditProfile", title: "Edit Profile")
        add("AvatarCropViewController", title: "Move and Scale", segue: "showCrop")
        add("PaywallViewController", sbid: "Paywall")
        add("OnboardingViewController", sbid: "Onboarding")

        func c(_ name: String) -> Int {
            guard let i = index[name] else { preconditionFailure("unknown class \(name)") }
            return i
        }
        for (i, embeds, next) in pending {
            list[i].embeds = embeds.map(c)
            list[i].next = next.map(c)
        }
        classes = list

        let login = Presentable(
            content: c("LoginViewController"), inNavigation: true, phoneStyle: .fullScreen, padStyle: .formSheet,
            segue: "showLogin", pushes: [c("SignUpViewController"), c("ForgotPasswordViewController")])
        let share = Presentable(
            content: c("UIActivityViewController"), inNavigation: false, phoneStyle: .automatic, padStyle: .popover,
            anchor: .sourceView("shareButton"), segue: "")
        let safari = Presentable(
            content: c("SFSafariViewController"), inNavigation: false, phoneStyle: .fullScreen, padStyle: .pageSheet,
            segue: "")
        let editProfile = Presentable(
            content: c("EditProfileViewController"), inNavigation: true, phoneStyle: .pageSheet, padStyle: .formSheet,
            segue: "editProfile", pushes: [c("AvatarCropViewController")])
        let filters = Presentable(
            content: c("FilterViewController"), inNavigation: true, phoneStyle: .pageSheet, padStyle: .popover,
            anchor: .barButton("filterButton"), segue: "showFilters")
        let sort = Presentable(
            content: c("SortOptionsViewController"), inNavigation: false, phoneStyle: .popover, padStyle: .popover,
            anchor: .barButton("sortButton"), segue: "showSortOptions")
        let photo = Presentable(
            content: c("ImageViewerViewController"), inNavigation: false, phoneStyle: .overFullScreen,
            padStyle: .overFullScreen, transition: "crossDissolve", segue: "showPhoto")

        let common: [StaticString] = [
            "Couldn’t Connect", "Sign Out?", "Allow Notifications?", "Your session has expired.\nPlease sign in again.",
        ]

        let searchQueries: [StaticString] = [
            "lasagna", "crème brûlée", "\"quick\" dinner", "tofu & rice", "piña colada", "🍕 pizza", "日本料理",
            "C:\\recipes", "gluten-free", "5 min", "chili\tcon carne",
        ]

        catalogs = [
            // recipes
            Catalog(
                tabBar: c("MainTabBarController"), split: c("UISplitViewController"),
                tabRoots: [
                    c("RecipeListViewController"), c("SearchViewController"), c("MealPlanViewController"),
                    c("FavoritesViewController"), c("ProfileViewController"),
                ],
                navigationRoot: c("RecipeListViewController"), splitPrimaryRoot: c("RecipeListViewController"),
                emptyDetail: c("EmptyDetailViewController"),
                details: [
                    c("RecipeDetailViewController"), c("StepByStepViewController"),
                    c("RecipeDetailViewController"), c("ReviewsViewController"),
                ],
                pushes: [
                    c("RecipeDetailViewController"), c("SearchResultsViewController"),
                    c("RecipeCollectionViewController"), c("SettingsViewController"),
                    c("ShoppingListViewController"), c("MealPlanViewController"),
                ],
                presentables: [
                    filters, sort, share, login, editProfile, photo, safari,
                    Presentable(
                        content: c("AddRecipeViewController"), inNavigation: true, phoneStyle: .pageSheet,
                        padStyle: .formSheet, segue: "addRecipe",
                        pushes: [c("IngredientPickerViewController"), c("UnitPickerViewController")]),
                    Presentable(
                        content: c("PaywallViewController"), inNavigation: false, phoneStyle: .fullScreen,
                        padStyle: .fullScreen, transition: "coverVertical", segue: "showPaywall"),
                ],
                alertTitles: common + ["Delete Recipe?", "Remove from Favorites?", "Timer Finished"],
                sheetTitles: ["Share Recipe", "Add to Meal Plan", "Servings"],
                marks: [
                    MarkTemplate(
                        name: "recipe_viewed",
                        props: [
                            ("recipe_id", .identifier("r-", 5)),
                            ("source", .strings(["feed", "search", "favorites", "deeplink", "meal_plan"])),
                            ("servings", .integer(1, 8)), ("vegetarian", .flag(0.3)),
                        ]),
                    MarkTemplate(
                        name: "search_performed",
                        props: [
                            ("query", .strings(searchQueries)), ("results", .integer(0, 120)),
                        ]),
                    MarkTemplate(
                        name: "favorite_added",
                        props: [
                            ("recipe_id", .identifier("r-", 5)), ("from_detail", .flag(0.8)),
                        ]),
                    MarkTemplate(
                        name: "timer_started",
                        props: [
                            ("seconds", .integer(60, 3600)), ("step", .integer(1, 12)),
                        ]),
                    MarkTemplate(
                        name: "rating_submitted",
                        props: [
                            ("stars", .integer(1, 5)), ("with_comment", .flag(0.25)), ("avg_before", .tenths(25, 50)),
                        ]),
                ]),
            // shopping
            Catalog(
                tabBar: c("UITabBarController"), split: c("RootSplitViewController"),
                tabRoots: [
                    c("HomeFeedViewController"), c("CategoryListViewController"), c("CartViewController"),
                    c("AccountViewController"),
                ],
                navigationRoot: c("HomeFeedViewController"), splitPrimaryRoot: c("CategoryListViewController"),
                emptyDetail: c("EmptyDetailViewController"),
                details: [
                    c("ProductListViewController"), c("ProductDetailViewController"),
                    c("ProductDetailViewController"), c("WishlistViewController"),
                ],
                pushes: [
                    c("ProductDetailViewController"), c("ProductListViewController"), c("CartViewController"),
                    c("OrderHistoryViewController"), c("WishlistViewController"), c("SettingsViewController"),
                ],
                presentables: [
                    filters, sort, share, login, photo, safari,
                    Presentable(
                        content: c("QuickAddToCartViewController"), inNavigation: false,
                        phoneStyle: .overCurrentContext, padStyle: .overCurrentContext, transition: "crossDissolve",
                        segue: "quickAdd"),
                    Presentable(
                        content: c("SizeGuideViewController"), inNavigation: false, phoneStyle: .currentContext,
                        padStyle: .currentContext, segue: "showSizeGuide"),
                    Presentable(
                        content: c("CouponViewController"), inNavigation: true, phoneStyle: .pageSheet,
                        padStyle: .formSheet, segue: "addCoupon", pushes: [c("AddressFormViewController")]),
                ],
                alertTitles: common + ["Remove Item?", "Out of Stock", "Payment Declined", "Apply Coupon “WINTER25”?"],
                sheetTitles: ["Sort By", "Choose Size", "Share Product"],
                marks: [
                    MarkTemplate(
                        name: "add_to_cart",
                        props: [
                            ("sku", .identifier("SKU-", 6)), ("price", .money(199, 39999)), ("quantity", .integer(1, 4)),
                            ("in_stock", .flag(0.95)),
                        ]),
                    MarkTemplate(
                        name: "checkout_started",
                        props: [
                            ("items", .integer(1, 9)), ("total", .money(499, 89999)),
                            ("currency", .strings(["EUR", "USD", "GBP", "CHF", "JPY"])),
                        ]),
                    MarkTemplate(
                        name: "purchase_completed",
                        props: [
                            ("order_id", .identifier("ord_", 8)), ("total", .money(499, 89999)),
                            ("payment", .strings(["apple_pay", "card", "paypal", "klarna"])), ("first_order", .flag(0.2)),
                        ]),
                    MarkTemplate(
                        name: "search_performed",
                        props: [
                            (
                                "query",
                                .strings([
                                    "running shoes", "usb-c cable", "14\" laptop sleeve", "café table",
                                    "größe 42", "back\\pack",
                                ])
                            ),
                            ("results", .integer(0, 500)),
                        ]),
                    MarkTemplate(
                        name: "banner_tapped",
                        props: [
                            ("campaign", .strings(["black_friday", "winter_sale", "free_shipping"])),
                            ("position", .integer(0, 6)),
                        ]),
                ]),
            // mail
            Catalog(
                tabBar: c("UITabBarController"), split: c("UISplitViewController"),
                tabRoots: [c("MailboxListViewController"), c("SearchViewController"), c("SettingsViewController")],
                navigationRoot: c("MailboxListViewController"), splitPrimaryRoot: c("MailboxListViewController"),
                emptyDetail: c("EmptyDetailViewController"),
                details: [
                    c("MessageDetailViewController"), c("MessageDetailViewController"),
                    c("ThreadViewController"),
                ],
                pushes: [
                    c("MessageListViewController"), c("MessageDetailViewController"), c("ThreadViewController"),
                    c("ContactDetailViewController"), c("SettingsViewController"),
                ],
                presentables: [
                    share, safari, login,
                    Presentable(
                        content: c("ComposeViewController"), inNavigation: true, phoneStyle: .pageSheet,
                        padStyle: .formSheet, segue: "compose", pushes: [c("RecipientPickerViewController")]),
                    Presentable(
                        content: c("ComposeViewController"), inNavigation: true, phoneStyle: .automatic,
                        padStyle: .pageSheet, segue: "reply", pushes: [c("RecipientPickerViewController")]),
                    Presentable(
                        content: c("FolderPickerViewController"), inNavigation: true, phoneStyle: .pageSheet,
                        padStyle: .popover, anchor: .barButton("moveButton"), segue: "moveMessage"),
                    Presentable(
                        content: c("QLPreviewController"), inNavigation: false, phoneStyle: .fullScreen,
                        padStyle: .fullScreen, transition: "crossDissolve", segue: ""),
                ],
                alertTitles: common + ["Discard Draft?", "Delete 3 Messages?", "Mark All as Read?", "No Subject"],
                sheetTitles: ["Reply", "Move Message", "Flag"],
                marks: [
                    MarkTemplate(
                        name: "message_opened",
                        props: [
                            ("folder", .strings(["Inbox", "Archive", "Sent", "Newsletters", "Reçus"])),
                            ("unread", .flag(0.6)), ("attachments", .integer(0, 3)),
                        ]),
                    MarkTemplate(
                        name: "message_sent",
                        props: [
                            ("recipients", .integer(1, 5)), ("has_attachment", .flag(0.2)),
                            ("draft_seconds", .integer(4, 900)),
                        ]),
                    MarkTemplate(
                        name: "swipe_action",
                        props: [
                            ("action", .strings(["archive", "delete", "flag", "snooze", "mark_read"]))
                        ]),
                    MarkTemplate(
                        name: "sync_finished",
                        props: [
                            ("new_messages", .integer(0, 40)), ("duration_s", .tenths(1, 95)), ("on_wifi", .flag(0.7)),
                        ]),
                ]),
            // fitness
            Catalog(
                tabBar: c("MainTabBarController"), split: c("RootSplitViewController"),
                tabRoots: [
                    c("ActivityFeedViewController"), c("TrailListViewController"),
                    c("WorkoutHistoryViewController"), c("ProfileViewController"),
                ],
                navigationRoot: c("TrailListViewController"), splitPrimaryRoot: c("TrailListViewController"),
                emptyDetail: c("EmptyDetailViewController"),
                details: [
                    c("TrailDetailViewController"), c("TrailDetailViewController"),
                    c("WorkoutSummaryViewController"), c("MapViewController"),
                ],
                pushes: [
                    c("TrailDetailViewController"), c("WorkoutSummaryViewController"),
                    c("LeaderboardViewController"), c("MapViewController"), c("SettingsViewController"),
                ],
                presentables: [
                    share, login, editProfile, filters,
                    Presentable(
                        content: c("RecordWorkoutViewController"), inNavigation: false, phoneStyle: .fullScreen,
                        padStyle: .fullScreen, segue: "startWorkout"),
                    Presentable(
                        content: c("MapOptionsViewController"), inNavigation: false, phoneStyle: .fullScreen,
                        padStyle: .fullScreen, transition: "partialCurl", segue: "showMapOptions"),
                    Presentable(
                        content: c("CreditsViewController"), inNavigation: false, phoneStyle: .fullScreen,
                        padStyle: .formSheet, transition: "flipHorizontal", segue: "showCredits"),
                    Presentable(
                        content: c("UIImagePickerController"), inNavigation: false, phoneStyle: .fullScreen,
                        padStyle: .popover, anchor: .sourceView("photoButton"), segue: ""),
                ],
                alertTitles: common + ["End Workout?", "Location Access Needed", "GPS Signal Lost"],
                sheetTitles: ["Add Photo", "Share Workout", "Units"],
                marks: [
                    MarkTemplate(
                        name: "workout_started",
                        props: [
                            ("type", .strings(["run", "ride", "hike", "walk", "swim"])), ("indoor", .flag(0.15)),
                        ]),
                    MarkTemplate(
                        name: "workout_finished",
                        props: [
                            ("distance_km", .tenths(5, 422)), ("duration_s", .integer(300, 14400)),
                            ("avg_hr", .integer(90, 182)), ("personal_best", .flag(0.05)),
                        ]),
                    MarkTemplate(
                        name: "trail_saved",
                        props: [
                            ("trail_id", .identifier("t-", 6)),
                            ("difficulty", .strings(["easy", "moderate", "hard", "très difficile"])),
                        ]),
                    MarkTemplate(name: "kudos_given", props: [("count", .integer(1, 3))]),
                ]),
        ]
    }
}
