/** DAVE's voice opcodes until the voice gateway's `VoiceOpcodes` lands in @hearth/protocol. */
export const VoiceOpcodes = {
  DavePrepareTransition: 21,
  DaveExecuteTransition: 22,
  DaveTransitionReady: 23,
  DavePrepareEpoch: 24,
  DaveMlsExternalSender: 25,
  DaveMlsKeyPackage: 26,
  DaveMlsProposals: 27,
  DaveMlsCommitWelcome: 28,
  DaveMlsAnnounceCommitTransition: 29,
  DaveMlsWelcome: 30,
  DaveMlsInvalidCommitWelcome: 31,
} as const;
export const DAVE_PROTOCOL_VERSION = 1;
