// Elfern Arena sample bot in C++: one bidirectional gRPC stream to the referee.
//
// Reads ARENA_ADDRESS and ARENA_TOKEN, opens Referee.Play, sends Join, then answers every
// TurnRequest with one Action for the same turn_id. Stubs are generated from proto/referee.proto
// by the Makefile (protoc + grpc_cpp_plugin). See docs/starter-cpp.md.
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "referee.grpc.pb.h"
#include "strategy.h"

namespace v1 = elfern::arena::v1;

int main() {
  const char* address = std::getenv("ARENA_ADDRESS");
  const char* token = std::getenv("ARENA_TOKEN");
  if (address == nullptr || token == nullptr) {
    std::cerr << "ARENA_ADDRESS and ARENA_TOKEN must be set (the arena sets them; see docs/starter-cpp.md)\n";
    return 2;
  }
  auto channel = grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
  auto stub = v1::Referee::NewStub(channel);
  grpc::ClientContext context;
  std::unique_ptr<grpc::ClientReaderWriter<v1::BotMessage, v1::RefereeMessage>> stream(stub->Play(&context));

  v1::BotMessage join;
  join.mutable_join()->set_token(token);
  join.mutable_join()->set_bot_name("cpp-greedy");
  join.mutable_join()->set_bot_version("1.0.0");
  join.mutable_join()->set_protocol_version(1);
  if (!stream->Write(join)) {
    std::cerr << "could not send Join to " << address << "\n";
    return 1;
  }

  elfern::SplitMix64 rng;  // reseeded at the Welcome, which always comes first
  v1::RefereeMessage message;
  while (stream->Read(&message)) {
    switch (message.msg_case()) {
      case v1::RefereeMessage::kWelcome:
        rng = elfern::SplitMix64(message.welcome().bot_seed());  // the same seed, the same choices
        std::cout << "seat " << message.welcome().seat() << " against " << message.welcome().opponent_name() << std::endl;
        break;
      case v1::RefereeMessage::kTurnRequest: {
        const auto& turn = message.turn_request();
        std::vector<std::string> legal(turn.legal_cards().begin(), turn.legal_cards().end());
        v1::BotMessage reply;
        reply.mutable_action()->set_turn_id(turn.turn_id());
        reply.mutable_action()->set_card(elfern::Choose(legal, turn.view().lead_card(), turn.view().trump_suit(), rng));
        stream->Write(reply);
        break;
      }
      case v1::RefereeMessage::kMatchResult: {
        const auto& result = message.match_result();
        std::cout << "match over: winner " << result.winner() << ", end " << result.end_reason() << std::endl;
        break;
      }
      case v1::RefereeMessage::kError:
        std::cerr << "referee error " << message.error().code() << ": " << message.error().message() << std::endl;
        break;
      default:
        break;  // DealResult: nothing to answer (DealStart and TrickResult ride in TurnRequest)
    }
  }
  stream->WritesDone();
  grpc::Status status = stream->Finish();
  if (!status.ok() && status.error_code() != grpc::StatusCode::CANCELLED) {
    std::cerr << "stream ended: " << status.error_message() << std::endl;
  }
  return 0;
}
