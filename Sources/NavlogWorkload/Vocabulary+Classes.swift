// The controller classes of the simulated apps, as a table.

extension Vocabulary {
    /// One row of the class table: a class, and by name the classes it embeds and pushes next
    /// (resolved to indices once the whole table is read).
    struct ClassRow: Sendable {
        /// The class, without its embeds and next screens.
        var controllerClass: ControllerClass
        /// The names of the classes embedded in its container view.
        var embeds: [String]
        /// The names of the classes its screen usually pushes next.
        var next: [String]

        init(
            _ name: StaticString, kind: StaticString = "", kindRequired: Bool = false, sbid: StaticString = "",
            title: StaticString = "", unwind: StaticString = "", unwindSegue: StaticString = "",
            segue: StaticString = "", embeds: [String] = [], slot: StaticString = "", embedSegue: StaticString = "",
            definesContext: Bool = false, next: [String] = []
        ) {
            controllerClass = ControllerClass(
                name: name, kind: kind, kindRequired: kindRequired, sbid: sbid, title: title,
                unwindAction: unwind, unwindSegue: unwindSegue, segue: segue, slot: slot,
                embedSegue: embedSegue, definesContext: definesContext)
            self.embeds = embeds
            self.next = next
        }
    }

    /// Every class the simulated apps use, in index order: UIKit's containers first, at the
    /// indices ``Vocabulary/navigation`` ... ``Vocabulary/alert`` name.
    static let classTable: [ClassRow] = [
        // UIKit containers first (indices fixed above).
        ClassRow("UINavigationController", kind: "navigation"),
        ClassRow("UITabBarController", kind: "tab"),
        ClassRow("UISplitViewController", kind: "split"),
        ClassRow("UIPageViewController", kind: "page"),
        ClassRow("UIAlertController", kind: "alert"),
        ClassRow("MainTabBarController", kind: "tab", kindRequired: true, sbid: "MainTabBar"),
        ClassRow("RootSplitViewController", kind: "split", kindRequired: true, sbid: "RootSplit"),
        ClassRow("UIActivityViewController"),
        ClassRow("SFSafariViewController"),
        ClassRow("UIImagePickerController"),
        ClassRow("QLPreviewController"),
        ClassRow("EmptyDetailViewController", sbid: "EmptyDetail", title: "Nothing Selected"),

        // Shared screens.
        ClassRow("SearchViewController", sbid: "Search", title: "Search", segue: "showSearch"),
        ClassRow(
            "ProfileViewController", sbid: "Profile", title: "Profile", unwind: "unwindToProfile:",
            unwindSegue: "unwindToProfile", segue: "showProfile", embeds: ["ProfileHeaderViewController"],
            slot: "headerContainer", embedSegue: "embedProfileHeader",
            next: ["SettingsViewController", "AboutViewController"]),
        ClassRow("ProfileHeaderViewController"),
        ClassRow(
            "SettingsViewController", sbid: "Settings", title: "Settings", unwind: "unwindToSettings:",
            unwindSegue: "unwindToSettings", segue: "showSettings",
            next: ["NotificationSettingsViewController", "AboutViewController", "PrivacySettingsViewController"]),
        ClassRow("NotificationSettingsViewController", title: "Notifications", segue: "showNotificationSettings"),
        ClassRow("PrivacySettingsViewController", title: "Privacy", segue: "showPrivacy"),
        ClassRow("AboutViewController", sbid: "About", title: "About", segue: "showAbout"),

        // Recipes.
        ClassRow(
            "RecipeListViewController", sbid: "RecipeList", title: "Recipes", unwind: "unwindToRecipeList:",
            unwindSegue: "unwindToRecipeList", segue: "showRecipes",
            next: ["RecipeDetailViewController", "RecipeDetailViewController", "RecipeCollectionViewController"]),
        ClassRow(
            "RecipeDetailViewController", sbid: "RecipeDetail", segue: "showRecipeDetail",
            embeds: ["RecipeHeaderViewController"], slot: "headerContainer", embedSegue: "embedRecipeHeader",
            next: [
                "IngredientListViewController", "StepByStepViewController", "ReviewsViewController",
                "AuthorProfileViewController",
            ]),
        ClassRow("RecipeHeaderViewController"),
        ClassRow(
            "IngredientListViewController", title: "Ingredients", segue: "showIngredients",
            next: ["ShoppingListViewController"]),
        ClassRow(
            "StepByStepViewController", title: "Cook Mode", segue: "showSteps", embeds: ["UIPageViewController"],
            slot: "pageContainer", embedSegue: "embedSteps"),
        ClassRow("ReviewsViewController", title: "Reviews", segue: "showReviews", next: ["AuthorProfileViewController"]),
        ClassRow(
            "AuthorProfileViewController", sbid: "AuthorProfile", segue: "showAuthor",
            next: ["RecipeDetailViewController", "RecipeCollectionViewController"]),
        ClassRow(
            "RecipeCollectionViewController", title: "Collection", segue: "showCollection",
            next: ["RecipeDetailViewController"]),
        ClassRow(
            "SearchResultsViewController", title: "Results", segue: "showResults",
            next: ["RecipeDetailViewController"]),
        ClassRow(
            "FavoritesViewController", sbid: "Favorites", title: "Favorites", unwind: "unwindToFavorites:",
            unwindSegue: "unwindToFavorites", next: ["RecipeDetailViewController"]),
        ClassRow(
            "MealPlanViewController", title: "Meal Plan", segue: "showMealPlan",
            embeds: ["WeekPlanViewController", "MonthPlanViewController"], slot: "calendarContainer",
            embedSegue: "embedCalendar", definesContext: true,
            next: ["RecipeDetailViewController", "ShoppingListViewController"]),
        ClassRow("WeekPlanViewController"),
        ClassRow("MonthPlanViewController"),
        ClassRow("ShoppingListViewController", title: "Shopping List", segue: "showShoppingList"),
        ClassRow("AddRecipeViewController", sbid: "AddRecipe", title: "New Recipe"),
        ClassRow(
            "IngredientPickerViewController", title: "Add Ingredient", segue: "pickIngredient",
            next: ["UnitPickerViewController"]),
        ClassRow("UnitPickerViewController", title: "Unit", segue: "pickUnit"),
        ClassRow("ImageViewerViewController", sbid: "ImageViewer"),

        // Shopping.
        ClassRow(
            "HomeFeedViewController", sbid: "HomeFeed", title: "Home", unwind: "unwindToHome:",
            unwindSegue: "unwindToHome", next: ["ProductDetailViewController", "ProductListViewController"]),
        ClassRow(
            "CategoryListViewController", sbid: "Categories", title: "Categories", segue: "showCategories",
            next: ["ProductListViewController"]),
        ClassRow("ProductListViewController", segue: "showProducts", next: ["ProductDetailViewController"]),
        ClassRow(
            "ProductDetailViewController", sbid: "ProductDetail", segue: "showProduct",
            embeds: ["UIPageViewController"], slot: "galleryContainer", embedSegue: "embedGallery",
            definesContext: true,
            next: ["ProductReviewsViewController", "ProductDetailViewController", "CartViewController"]),
        ClassRow("ProductReviewsViewController", title: "Reviews", segue: "showProductReviews"),
        ClassRow(
            "CartViewController", sbid: "Cart", title: "Cart", unwind: "unwindToCart:", unwindSegue: "unwindToCart",
            segue: "showCart", next: ["CheckoutViewController", "ProductDetailViewController"]),
        ClassRow(
            "CheckoutViewController", sbid: "Checkout", title: "Checkout", segue: "showCheckout",
            next: ["ShippingAddressViewController", "PaymentMethodViewController", "OrderConfirmationViewController"]),
        ClassRow(
            "ShippingAddressViewController", title: "Shipping", segue: "showShipping",
            next: ["PaymentMethodViewController"]),
        ClassRow(
            "PaymentMethodViewController", title: "Payment", segue: "showPayment",
            next: ["OrderConfirmationViewController"]),
        ClassRow(
            "OrderConfirmationViewController", title: "Thank You!", segue: "showConfirmation",
            next: ["OrderDetailViewController"]),
        ClassRow(
            "OrderHistoryViewController", title: "Orders", segue: "showOrders",
            embeds: ["ActiveOrdersViewController", "PastOrdersViewController"], slot: "contentContainer",
            embedSegue: "embedOrders", next: ["OrderDetailViewController"]),
        ClassRow("ActiveOrdersViewController"),
        ClassRow("PastOrdersViewController"),
        ClassRow("OrderDetailViewController", segue: "showOrder", next: ["ProductDetailViewController"]),
        ClassRow(
            "AccountViewController", sbid: "Account", title: "Account", unwind: "unwindToAccount:",
            unwindSegue: "unwindToAccount",
            next: ["OrderHistoryViewController", "WishlistViewController", "SettingsViewController"]),
        ClassRow("WishlistViewController", title: "Wishlist", segue: "showWishlist", next: ["ProductDetailViewController"]),
        ClassRow("FilterViewController", sbid: "Filters", title: "Filters"),
        ClassRow("SortOptionsViewController", sbid: "SortOptions"),
        ClassRow("QuickAddToCartViewController"),
        ClassRow("SizeGuideViewController", title: "Size Guide"),
        ClassRow("CouponViewController", title: "Add Coupon"),
        ClassRow("AddressFormViewController", title: "New Address", segue: "showAddressForm"),

        // Mail.
        ClassRow(
            "MailboxListViewController", sbid: "Mailboxes", title: "Mailboxes", segue: "showMailboxes",
            next: ["MessageListViewController"]),
        ClassRow(
            "MessageListViewController", sbid: "MessageList", title: "Inbox", unwind: "unwindToMessageList:",
            unwindSegue: "unwindToMessageList", segue: "showMailbox",
            next: ["MessageDetailViewController", "ThreadViewController"]),
        ClassRow(
            "MessageDetailViewController", sbid: "MessageDetail", segue: "showMessage",
            embeds: ["AttachmentStripViewController"], slot: "attachmentsContainer", embedSegue: "embedAttachments",
            next: ["AttachmentPreviewViewController", "ContactDetailViewController"]),
        ClassRow("AttachmentStripViewController"),
        ClassRow("ThreadViewController", segue: "showThread", next: ["MessageDetailViewController"]),
        ClassRow("AttachmentPreviewViewController", segue: "showAttachment"),
        ClassRow(
            "ContactDetailViewController", sbid: "ContactDetail", segue: "showContact",
            next: ["MessageListViewController"]),
        ClassRow("ComposeViewController", sbid: "Compose", title: "New Message"),
        ClassRow("RecipientPickerViewController", title: "Add Recipient", segue: "showRecipients"),
        ClassRow("FolderPickerViewController", title: "Move to…"),

        // Fitness.
        ClassRow(
            "ActivityFeedViewController", sbid: "ActivityFeed", title: "Activity", unwind: "unwindToActivity:",
            unwindSegue: "unwindToActivity", next: ["WorkoutSummaryViewController", "TrailDetailViewController"]),
        ClassRow(
            "TrailListViewController", sbid: "TrailList", title: "Trails", unwind: "unwindToTrails:",
            unwindSegue: "unwindToTrails", segue: "showTrails", next: ["TrailDetailViewController"]),
        ClassRow(
            "TrailDetailViewController", sbid: "TrailDetail", segue: "showTrail", embeds: ["MapSnippetViewController"],
            slot: "mapContainer", embedSegue: "embedMap", next: ["MapViewController", "LeaderboardViewController"]),
        ClassRow("MapSnippetViewController"),
        ClassRow("MapViewController", title: "Map", segue: "showMap"),
        ClassRow(
            "WorkoutSummaryViewController", segue: "showWorkout",
            embeds: ["HeartRateChartViewController", "PaceChartViewController"], slot: "chartContainer",
            embedSegue: "embedChart", next: ["MapViewController", "LeaderboardViewController"]),
        ClassRow("HeartRateChartViewController"),
        ClassRow("PaceChartViewController"),
        ClassRow(
            "LeaderboardViewController", title: "Leaderboard", segue: "showLeaderboard",
            next: ["AuthorProfileViewController"]),
        ClassRow(
            "WorkoutHistoryViewController", title: "History", segue: "showHistory",
            next: ["WorkoutSummaryViewController"]),
        ClassRow("RecordWorkoutViewController", sbid: "RecordWorkout"),
        ClassRow("MapOptionsViewController", sbid: "MapOptions"),
        ClassRow("CreditsViewController", title: "Credits"),

        // Presented forms shared by several apps.
        ClassRow("LoginViewController", sbid: "Login", title: "Sign In"),
        ClassRow("SignUpViewController", title: "Create Account", segue: "showSignUp"),
        ClassRow("ForgotPasswordViewController", title: "Reset Password", segue: "showForgotPassword"),
        ClassRow("EditProfileViewController", sbid: "EditProfile", title: "Edit Profile"),
        ClassRow("AvatarCropViewController", title: "Move and Scale", segue: "showCrop"),
        ClassRow("PaywallViewController", sbid: "Paywall"),
        ClassRow("OnboardingViewController", sbid: "Onboarding"),
    ]
}
