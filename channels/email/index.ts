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
export { verifyMail, rawHeaders, trustedClient, aligned, validateEmailAllowlist, type EmailTier, type EmailTrustPolicy, type MailVerdict } from './trust.js';
export { emailMessageId, emailSessionId, threadRoot, referenceList, bareMessageId, replySubject, stripQuotedText, parseDecision, outboundMessageId, type ApprovalDecision } from './threading.js';
export { emailOutcomeText, gateBody, gateSubject, inputDigest } from './render.js';
export { emailConfigFromEnv, emailOptionsFromConfig, emailSettingsFromEnv, type EmailConfig, type EmailSettings } from './config.js';
