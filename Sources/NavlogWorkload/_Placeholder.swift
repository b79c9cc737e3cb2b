enum WorkloadPlaceholder {}
