// What each kind of simulated app shows, presents and marks.

extension Vocabulary {
    /// The presentations, alert titles and search terms several apps share.
    struct SharedForms {
        var login, share, safari, editProfile, filters, sort, photo: Presentable
        var common: [StaticString]
        var searchQueries: [StaticString]

        init(_ classIndex: (String) -> Int) {
            login = Presentable(
                content: classIndex("LoginViewController"), inNavigation: true, phoneStyle: .fullScreen, padStyle: .formSheet,
                segue: "showLogin", pushes: [classIndex("SignUpViewController"), classIndex("ForgotPasswordViewController")])
            share = Presentable(
                content: classIndex("UIActivityViewController"), inNavigation: false, phoneStyle: .automatic, padStyle: .popover,
                anchor: .sourceView("shareButton"), segue: "")
            safari = Presentable(
                content: classIndex("SFSafariViewController"), inNavigation: false, phoneStyle: .fullScreen, padStyle: .pageSheet,
                segue: "")
            editProfile = Presentable(
                content: classIndex("EditProfileViewController"), inNavigation: true, phoneStyle: .pageSheet, padStyle: .formSheet,
                segue: "editProfile", pushes: [classIndex("AvatarCropViewController")])
            filters = Presentable(
                content: classIndex("FilterViewController"), inNavigation: true, phoneStyle: .pageSheet, padStyle: .popover,
                anchor: .barButton("filterButton"), segue: "showFilters")
            sort = Presentable(
                content: classIndex("SortOptionsViewController"), inNavigation: false, phoneStyle: .popover, padStyle: .popover,
                anchor: .barButton("sortButton"), segue: "showSortOptions")
            photo = Presentable(
                content: classIndex("ImageViewerViewController"), inNavigation: false, phoneStyle: .overFullScreen,
                padStyle: .overFullScreen, transition: "crossDissolve", segue: "showPhoto")

            common = [
                "Couldn’t Connect", "Sign Out?", "Allow Notifications?", "Your session has expired.\nPlease sign in again.",
            ]

            searchQueries = [
                "lasagna", "crème brûlée", "\"quick\" dinner", "tofu & rice", "piña colada", "🍕 pizza", "日本料理",
                "C:\\recipes", "gluten-free", "5 min", "chili\tcon carne",
            ]
        }
    }

    /// The recipes app's catalog: `classIndex` gives a class's index by its name.
    static func recipesCatalog(_ classIndex: (String) -> Int, _ shared: SharedForms) -> Catalog {
        Catalog(
            tabBar: classIndex("MainTabBarController"), split: classIndex("UISplitViewController"),
            tabRoots: [
                classIndex("RecipeListViewController"), classIndex("SearchViewController"), classIndex("MealPlanViewController"),
                classIndex("FavoritesViewController"), classIndex("ProfileViewController"),
            ],
            navigationRoot: classIndex("RecipeListViewController"), splitPrimaryRoot: classIndex("RecipeListViewController"),
            emptyDetail: classIndex("EmptyDetailViewController"),
            details: [
                classIndex("RecipeDetailViewController"), classIndex("StepByStepViewController"),
                classIndex("RecipeDetailViewController"), classIndex("ReviewsViewController"),
            ],
            pushes: [
                classIndex("RecipeDetailViewController"), classIndex("SearchResultsViewController"),
                classIndex("RecipeCollectionViewController"), classIndex("SettingsViewController"),
                classIndex("ShoppingListViewController"), classIndex("MealPlanViewController"),
            ],
            presentables: [
                shared.filters, shared.sort, shared.share, shared.login, shared.editProfile, shared.photo, shared.safari,
                Presentable(
                    content: classIndex("AddRecipeViewController"), inNavigation: true, phoneStyle: .pageSheet,
                    padStyle: .formSheet, segue: "addRecipe",
                    pushes: [classIndex("IngredientPickerViewController"), classIndex("UnitPickerViewController")]),
                Presentable(
                    content: classIndex("PaywallViewController"), inNavigation: false, phoneStyle: .fullScreen,
                    padStyle: .fullScreen, transition: "coverVertical", segue: "showPaywall"),
            ],
            alertTitles: shared.common + ["Delete Recipe?", "Remove from Favorites?", "Timer Finished"],
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
                        ("query", .strings(shared.searchQueries)), ("results", .integer(0, 120)),
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
    }

    /// The shopping app's catalog: `classIndex` gives a class's index by its name.
    static func shoppingCatalog(_ classIndex: (String) -> Int, _ shared: SharedForms) -> Catalog {
        Catalog(
            tabBar: classIndex("UITabBarController"), split: classIndex("RootSplitViewController"),
            tabRoots: [
                classIndex("HomeFeedViewController"), classIndex("CategoryListViewController"), classIndex("CartViewController"),
                classIndex("AccountViewController"),
            ],
            navigationRoot: classIndex("HomeFeedViewController"), splitPrimaryRoot: classIndex("CategoryListViewController"),
            emptyDetail: classIndex("EmptyDetailViewController"),
            details: [
                classIndex("ProductListViewController"), classIndex("ProductDetailViewController"),
                classIndex("ProductDetailViewController"), classIndex("WishlistViewController"),
            ],
            pushes: [
                classIndex("ProductDetailViewController"), classIndex("ProductListViewController"), classIndex("CartViewController"),
                classIndex("OrderHistoryViewController"), classIndex("WishlistViewController"), classIndex("SettingsViewController"),
            ],
            presentables: [
                shared.filters, shared.sort, shared.share, shared.login, shared.photo, shared.safari,
                Presentable(
                    content: classIndex("QuickAddToCartViewController"), inNavigation: false,
                    phoneStyle: .overCurrentContext, padStyle: .overCurrentContext, transition: "crossDissolve",
                    segue: "quickAdd"),
                Presentable(
                    content: classIndex("SizeGuideViewController"), inNavigation: false, phoneStyle: .currentContext,
                    padStyle: .currentContext, segue: "showSizeGuide"),
                Presentable(
                    content: classIndex("CouponViewController"), inNavigation: true, phoneStyle: .pageSheet,
                    padStyle: .formSheet, segue: "addCoupon", pushes: [classIndex("AddressFormViewController")]),
            ],
            alertTitles: shared.common + ["Remove Item?", "Out of Stock", "Payment Declined", "Apply Coupon “WINTER25”?"],
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
    }

    /// The mail app's catalog: `classIndex` gives a class's index by its name.
    static func mailCatalog(_ classIndex: (String) -> Int, _ shared: SharedForms) -> Catalog {
        Catalog(
            tabBar: classIndex("UITabBarController"), split: classIndex("UISplitViewController"),
            tabRoots: [classIndex("MailboxListViewController"), classIndex("SearchViewController"), classIndex("SettingsViewController")],
            navigationRoot: classIndex("MailboxListViewController"), splitPrimaryRoot: classIndex("MailboxListViewController"),
            emptyDetail: classIndex("EmptyDetailViewController"),
            details: [
                classIndex("MessageDetailViewController"), classIndex("MessageDetailViewController"),
                classIndex("ThreadViewController"),
            ],
            pushes: [
                classIndex("MessageListViewController"), classIndex("MessageDetailViewController"), classIndex("ThreadViewController"),
                classIndex("ContactDetailViewController"), classIndex("SettingsViewController"),
            ],
            presentables: [
                shared.share, shared.safari, shared.login,
                Presentable(
                    content: classIndex("ComposeViewController"), inNavigation: true, phoneStyle: .pageSheet,
                    padStyle: .formSheet, segue: "compose", pushes: [classIndex("RecipientPickerViewController")]),
                Presentable(
                    content: classIndex("ComposeViewController"), inNavigation: true, phoneStyle: .automatic,
                    padStyle: .pageSheet, segue: "reply", pushes: [classIndex("RecipientPickerViewController")]),
                Presentable(
                    content: classIndex("FolderPickerViewController"), inNavigation: true, phoneStyle: .pageSheet,
                    padStyle: .popover, anchor: .barButton("moveButton"), segue: "moveMessage"),
                Presentable(
                    content: classIndex("QLPreviewController"), inNavigation: false, phoneStyle: .fullScreen,
                    padStyle: .fullScreen, transition: "crossDissolve", segue: ""),
            ],
            alertTitles: shared.common + ["Discard Draft?", "Delete 3 Messages?", "Mark All as Read?", "No Subject"],
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
    }

    /// The fitness app's catalog: `classIndex` gives a class's index by its name.
    static func fitnessCatalog(_ classIndex: (String) -> Int, _ shared: SharedForms) -> Catalog {
        Catalog(
            tabBar: classIndex("MainTabBarController"), split: classIndex("RootSplitViewController"),
            tabRoots: [
                classIndex("ActivityFeedViewController"), classIndex("TrailListViewController"),
                classIndex("WorkoutHistoryViewController"), classIndex("ProfileViewController"),
            ],
            navigationRoot: classIndex("TrailListViewController"), splitPrimaryRoot: classIndex("TrailListViewController"),
            emptyDetail: classIndex("EmptyDetailViewController"),
            details: [
                classIndex("TrailDetailViewController"), classIndex("TrailDetailViewController"),
                classIndex("WorkoutSummaryViewController"), classIndex("MapViewController"),
            ],
            pushes: [
                classIndex("TrailDetailViewController"), classIndex("WorkoutSummaryViewController"),
                classIndex("LeaderboardViewController"), classIndex("MapViewController"), classIndex("SettingsViewController"),
            ],
            presentables: [
                shared.share, shared.login, shared.editProfile, shared.filters,
                Presentable(
                    content: classIndex("RecordWorkoutViewController"), inNavigation: false, phoneStyle: .fullScreen,
                    padStyle: .fullScreen, segue: "startWorkout"),
                Presentable(
                    content: classIndex("MapOptionsViewController"), inNavigation: false, phoneStyle: .fullScreen,
                    padStyle: .fullScreen, transition: "partialCurl", segue: "showMapOptions"),
                Presentable(
                    content: classIndex("CreditsViewController"), inNavigation: false, phoneStyle: .fullScreen,
                    padStyle: .formSheet, transition: "flipHorizontal", segue: "showCredits"),
                Presentable(
                    content: classIndex("UIImagePickerController"), inNavigation: false, phoneStyle: .fullScreen,
                    padStyle: .popover, anchor: .sourceView("photoButton"), segue: ""),
            ],
            alertTitles: shared.common + ["End Workout?", "Location Access Needed", "GPS Signal Lost"],
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
}
