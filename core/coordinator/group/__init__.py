"""kafka.coordinator.group: GroupMetadata, the records of ``__consumer_offsets``, GroupCoordinator."""
