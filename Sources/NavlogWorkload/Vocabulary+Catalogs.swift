// What each kind of simulated app shows, presents and marks: tables, with classes by name
// (resolved to indices of ``Vocabulary/classTable`` as the catalogs are built).

extension Vocabulary {
    /// The presentations, alert titles and search terms several apps share.
    enum SharedForms {
        static let login = Presentable(
            content: "LoginViewController", inNavigation: true, phoneStyle: .fullScreen, padStyle: .formSheet,
            segue: "showLogin", pushes: ["SignUpViewController", "ForgotPasswordViewController"])
        static let share = Presentable(
            content: "UIActivityViewController", inNavigation: false, phoneStyle: .automatic, padStyle: .popover,
            anchor: .sourceView("shareButton"), segue: "")
        static let safari = Presentable(
            content: "SFSafariViewController", inNavigation: false, phoneStyle: .fullScreen, padStyle: .pageSheet,
            segue: "")
        static let editProfile = Presentable(
            content: "EditProfileViewController", inNavigation: true, phoneStyle: .pageSheet, padStyle: .formSheet,
            segue: "editProfile", pushes: ["AvatarCropViewController"])
        static let filters = Presentable(
            content: "FilterViewController", inNavigation: true, phoneStyle: .pageSheet, padStyle: .popover,
            anchor: .barButton("filterButton"), segue: "showFilters")
        static let sort = Presentable(
            content: "SortOptionsViewController", inNavigation: false, phoneStyle: .popover, padStyle: .popover,
            anchor: .barButton("sortButton"), segue: "showSortOptions")
        static let photo = Presentable(
            content: "ImageViewerViewController", inNavigation: false, phoneStyle: .overFullScreen,
            padStyle: .overFullScreen, transition: "crossDissolve", segue: "showPhoto")

        static let commonAlertTitles: [StaticString] = [
            "Couldn’t Connect", "Sign Out?", "Allow Notifications?", "Your session has expired.\nPlease sign in again.",
        ]

        static let searchQueries: [StaticString] = [
            "lasagna", "crème brûlée", "\"quick\" dinner", "tofu & rice", "piña colada", "🍕 pizza", "日本料理",
            "C:\\recipes", "gluten-free", "5 min", "chili\tcon carne",
        ]
    }

    /// The recipes app's catalog.
    static let recipes = Catalog(
        tabBar: "MainTabBarController", split: "UISplitViewController",
        tabRoots: ["RecipeListViewController", "SearchViewController", "MealPlanViewController", "FavoritesViewController", "ProfileViewController"],
        navigationRoot: "RecipeListViewController", splitPrimaryRoot: "RecipeListViewController",
        details: ["RecipeDetailViewController", "StepByStepViewController", "RecipeDetailViewController", "ReviewsViewController"],
        pushes: [
            "RecipeDetailViewController", "SearchResultsViewController",
            "RecipeCollectionViewController", "SettingsViewController",
            "ShoppingListViewController", "MealPlanViewController",
        ],
        presentables: [
            SharedForms.filters, SharedForms.sort, SharedForms.share, SharedForms.login, SharedForms.editProfile, SharedForms.photo, SharedForms.safari,
            Presentable(
                content: "AddRecipeViewController", inNavigation: true, phoneStyle: .pageSheet,
                padStyle: .formSheet, segue: "addRecipe",
                pushes: ["IngredientPickerViewController", "UnitPickerViewController"]),
            Presentable(
                content: "PaywallViewController", inNavigation: false, phoneStyle: .fullScreen,
                padStyle: .fullScreen, transition: "coverVertical", segue: "showPaywall"),
        ],
        alertTitles: SharedForms.commonAlertTitles + ["Delete Recipe?", "Remove from Favorites?", "Timer Finished"],
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
                    ("query", .strings(SharedForms.searchQueries)), ("results", .integer(0, 120)),
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
        ])

    /// The shopping app's catalog.
    static let shopping = Catalog(
        tabBar: "UITabBarController", split: "RootSplitViewController",
        tabRoots: ["HomeFeedViewController", "CategoryListViewController", "CartViewController", "AccountViewController"],
        navigationRoot: "HomeFeedViewController", splitPrimaryRoot: "CategoryListViewController",
        details: ["ProductListViewController", "ProductDetailViewController", "ProductDetailViewController", "WishlistViewController"],
        pushes: [
            "ProductDetailViewController", "ProductListViewController", "CartViewController",
            "OrderHistoryViewController", "WishlistViewController", "SettingsViewController",
        ],
        presentables: [
            SharedForms.filters, SharedForms.sort, SharedForms.share, SharedForms.login, SharedForms.photo, SharedForms.safari,
            Presentable(
                content: "QuickAddToCartViewController", inNavigation: false,
                phoneStyle: .overCurrentContext, padStyle: .overCurrentContext, transition: "crossDissolve",
                segue: "quickAdd"),
            Presentable(
                content: "SizeGuideViewController", inNavigation: false, phoneStyle: .currentContext,
                padStyle: .currentContext, segue: "showSizeGuide"),
            Presentable(
                content: "CouponViewController", inNavigation: true, phoneStyle: .pageSheet,
                padStyle: .formSheet, segue: "addCoupon", pushes: ["AddressFormViewController"]),
        ],
        alertTitles: SharedForms.commonAlertTitles + ["Remove Item?", "Out of Stock", "Payment Declined", "Apply Coupon “WINTER25”?"],
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
        ])

    /// The mail app's catalog.
    static let mail = Catalog(
        tabBar: "UITabBarController", split: "UISplitViewController",
        tabRoots: ["MailboxListViewController", "SearchViewController", "SettingsViewController"],
        navigationRoot: "MailboxListViewController", splitPrimaryRoot: "MailboxListViewController",
        details: ["MessageDetailViewController", "MessageDetailViewController", "ThreadViewController"],
        pushes: ["MessageListViewController", "MessageDetailViewController", "ThreadViewController", "ContactDetailViewController", "SettingsViewController"],
        presentables: [
            SharedForms.share, SharedForms.safari, SharedForms.login,
            Presentable(
                content: "ComposeViewController", inNavigation: true, phoneStyle: .pageSheet,
                padStyle: .formSheet, segue: "compose", pushes: ["RecipientPickerViewController"]),
            Presentable(
                content: "ComposeViewController", inNavigation: true, phoneStyle: .automatic,
                padStyle: .pageSheet, segue: "reply", pushes: ["RecipientPickerViewController"]),
            Presentable(
                content: "FolderPickerViewController", inNavigation: true, phoneStyle: .pageSheet,
                padStyle: .popover, anchor: .barButton("moveButton"), segue: "moveMessage"),
            Presentable(
                content: "QLPreviewController", inNavigation: false, phoneStyle: .fullScreen,
                padStyle: .fullScreen, transition: "crossDissolve", segue: ""),
        ],
        alertTitles: SharedForms.commonAlertTitles + ["Discard Draft?", "Delete 3 Messages?", "Mark All as Read?", "No Subject"],
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
        ])

    /// The fitness app's catalog.
    static let fitness = Catalog(
        tabBar: "MainTabBarController", split: "RootSplitViewController",
        tabRoots: ["ActivityFeedViewController", "TrailListViewController", "WorkoutHistoryViewController", "ProfileViewController"],
        navigationRoot: "TrailListViewController", splitPrimaryRoot: "TrailListViewController",
        details: ["TrailDetailViewController", "TrailDetailViewController", "WorkoutSummaryViewController", "MapViewController"],
        pushes: ["TrailDetailViewController", "WorkoutSummaryViewController", "LeaderboardViewController", "MapViewController", "SettingsViewController"],
        presentables: [
            SharedForms.share, SharedForms.login, SharedForms.editProfile, SharedForms.filters,
            Presentable(
                content: "RecordWorkoutViewController", inNavigation: false, phoneStyle: .fullScreen,
                padStyle: .fullScreen, segue: "startWorkout"),
            Presentable(
                content: "MapOptionsViewController", inNavigation: false, phoneStyle: .fullScreen,
                padStyle: .fullScreen, transition: "partialCurl", segue: "showMapOptions"),
            Presentable(
                content: "CreditsViewController", inNavigation: false, phoneStyle: .fullScreen,
                padStyle: .formSheet, transition: "flipHorizontal", segue: "showCredits"),
            Presentable(
                content: "UIImagePickerController", inNavigation: false, phoneStyle: .fullScreen,
                padStyle: .popover, anchor: .sourceView("photoButton"), segue: ""),
        ],
        alertTitles: SharedForms.commonAlertTitles + ["End Workout?", "Location Access Needed", "GPS Signal Lost"],
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
        ])
}
