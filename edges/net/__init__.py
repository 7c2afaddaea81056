"""The network edge in thin layers, each a module with one job (`edges.transport` is their facade):

- `framing`: a Kafka frame cut from a connection's bytes, and a request or answer turned into one by its ApiSpec;
- `selector`: the one I/O thread of a process: listeners, connections, the selector loop, commands from other threads;
- `inbound`: the broker's side (Kafka's SocketServer Processor + KafkaApis.handle's dispatch): requests read one at a
  time per connection, handed to actors or edge handlers, answered in order;
- under `inbound`, its connection layers: `acceptor` (SocketServer.Acceptor), `tls` (SslTransportLayer),
  `sasl_layer` (SaslServerAuthenticator, re-authentication, the failed authentication's delayed close), `quota_layer`
  (sendResponseMaybeThrottle, KIP-219's muting); beside it `answers` (an answer's frames) and `edge_workers`;
- `outbound`: the process's own requests (Kafka's NetworkClient): correlation ids, host-name lookups, connecting,
  timeouts, NetResponse / NetSendFailed;
- `blocking_client`: one blocking connection for tools and tests.
"""
