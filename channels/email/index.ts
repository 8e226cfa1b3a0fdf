/** The email channel: IMAP IDLE inbound, SMTP outbound, trust from our own DKIM/SPF/DMARC check, approvals by reply. */
export {
  startEmailChannel,
  smtpFailure,
  EMAIL_CHANNEL_NAME,
  type EmailChannel,
  type EmailChannelOptions,
  type EmailMissionPort,
  type ImapSettings,
  type SmtpSettings,
} from './email-channel.js';
export { verifyMail, aligned, validateEmailAllowlist, type EmailTier, type EmailTrustPolicy, type MailVerdict } from './trust.js';
export { rawHeaders, headerTokens, type RawHeader, type HeaderToken } from './headers.js';
export { hopClient, receivedClauses, hopFromClause, HOP_MTAS, type HopMta, type TrustedHop, type HopClient } from './received.js';
export { upstreamSpf, parseAuthResults, type UpstreamSpf } from './auth-results.js';
export {
  emailMessageId,
  emailSessionId,
  threadRoot,
  referenceList,
  bareMessageId,
  replySubject,
  stripQuotedText,
  parseDecision,
  outboundMessageId,
  type ApprovalDecision,
} from './threading.js';
export { emailOutcomeText, gateBody, gateSubject, inputDigest } from './render.js';
export { emailConfigFromEnv, emailOptionsFromConfig, emailSettingsFromEnv, type EmailConfig, type EmailSettings } from './config.js';
