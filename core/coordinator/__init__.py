"""Kafka's coordinators (kafka.coordinator): the group coordinator."""
