"""Client quotas (Kafka 2.6.3's ClientQuotaManager family) and what KafkaApis does with them: pure, clock passed in."""
