print("navlog")
