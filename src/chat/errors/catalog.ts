// Every error the Chat service answers, declared once: Zulip's code, the message (Zulip 10.2's
// text wherever a client can see it), the HTTP status and the extra body fields. Handlers and domain
// code call these entries; test/chat/errors/catalog.test.ts pins the catalog and fails on a message
// literal written anywhere else.
import { defineError } from './chat-error.js';

const BASIC_CHALLENGE = { 'www-authenticate': 'Basic realm="zulip"' };

// ---- Transport: request target, routing, parameters -------------------------------------------

export const invalidRequestTarget = defineError({ code: 'BAD_REQUEST', message: 'Invalid request target' });
export const routeNotFound = defineError({ code: 'BAD_REQUEST', status: 404, message: 'Not Found' });
export const methodNotAllowed = defineError({
  code: 'BAD_REQUEST',
  status: 405,
  message: 'Method Not Allowed',
  headers: (a: { allowed: readonly string[] }) => ({ allow: a.allowed.join(', ') }),
});
export const malformedPathEscape = defineError({ code: 'BAD_REQUEST', message: 'Malformed URL: invalid percent-encoding in the path' });
/** HTTP node's parser refuses before a request exists; the transport answers with the parser's status (400, 408 or 431). */
export const malformedHttp = defineError({ code: 'BAD_REQUEST', message: 'Malformed HTTP request ({reason})' });
export const malformedBody = defineError({ code: 'BAD_REQUEST', message: 'Malformed request body: {reason}' });
export const lengthRequired = defineError({
  code: 'BAD_REQUEST',
  status: 411,
  message: 'A request body without a valid API key in the Authorization header must announce its length (Content-Length) of at most {limit} bytes',
});
export const bodyTooLarge = defineError({
  code: 'BAD_REQUEST',
  status: 413,
  message: 'Request body too large: the limit is {openLimit} bytes without a valid API key in the Authorization header, {limit} bytes with one',
});
/** A body over the limit of a request with a valid API key. */
export const bodyTooLargeWithKey = defineError({ code: 'BAD_REQUEST', status: 413, message: 'Request body is too large' });
// Refusals of a form or multipart body (chat/forms.ts), with the texts and statuses clients have had.
export const unsupportedMediaType = defineError({ code: 'BAD_REQUEST', status: 415, message: 'Unsupported Media Type' });
export const prototypeFieldName = defineError({ code: 'BAD_REQUEST', message: 'prototype property is not allowed as field name' });
export const invalidJsonPart = defineError({ code: 'BAD_REQUEST', status: 406, message: 'a request field is not a valid JSON as declared by its Content-Type' });
export const fileTooLarge = defineError({ code: 'BAD_REQUEST', status: 413, message: 'request file too large' });
export const partsLimit = defineError({ code: 'BAD_REQUEST', status: 413, message: 'reach {what} limit' });
/** Keel's own bounds on what a realm or a user holds (domain/bounds.ts); Zulip has no such error. */
export const limitReached = defineError({ code: 'BAD_REQUEST', message: 'Limit reached: {scope} can have at most {limit} {things}.' });
export const internalServerError = defineError({ code: 'INTERNAL_SERVER_ERROR', status: 500, message: 'Internal server error' });

/** Zulip's REQUEST_VARIABLE_MISSING (zerver/lib/request.py). */
export const missingArgument = defineError({
  code: 'REQUEST_VARIABLE_MISSING',
  message: "Missing '{var_name}' argument",
  extra: (a: { var_name: string }) => ({ var_name: a.var_name }),
});

// The typed-parameter messages of zerver/lib/typed_endpoint.py (ERROR_TEMPLATES), with the
// parameter's name (a nested one as subscriptions[0]["name"]) and var_name beside it.
const param = (a: { name: string; var_name: string }) => ({ var_name: a.var_name });
export const paramNotInteger = defineError({ code: 'BAD_REQUEST', message: '{name} is not an integer', extra: param });
export const paramNotNumber = defineError({ code: 'BAD_REQUEST', message: '{name} is not a number', extra: param });
export const paramNotBoolean = defineError({ code: 'BAD_REQUEST', message: '{name} is not a boolean', extra: param });
export const paramNotList = defineError({ code: 'BAD_REQUEST', message: '{name} is not a list', extra: param });
export const paramNotDict = defineError({ code: 'BAD_REQUEST', message: '{name} is not a dict', extra: param });
export const paramNotString = defineError({ code: 'BAD_REQUEST', message: '{name} is not a string', extra: param });
export const paramNotJson = defineError({ code: 'BAD_REQUEST', message: '{name} is not valid JSON', extra: param });
export const paramInvalid = defineError({ code: 'BAD_REQUEST', message: 'Invalid {name}', extra: param });
/** A value outside the list Zulip's check_int_in / check_string_in validators allow. */
export const paramNotInList = defineError({ code: 'BAD_REQUEST', message: 'Invalid {name}: Value error, Not in the list of possible values', extra: param });
/** A time zone Zulip's timezone_validator refuses (zerver/lib/typed_endpoint_validators.py). */
export const paramNotTimezone = defineError({ code: 'BAD_REQUEST', message: 'Invalid {name}: Value error, Not a recognized time zone', extra: param });
export const paramFieldMissing = defineError({ code: 'BAD_REQUEST', message: '{name}["{field}"] field is missing', extra: param });
export const paramTooLong = defineError({ code: 'BAD_REQUEST', message: '{name} is too long (limit: {limit} characters)', extra: param });
export const paramNullBytes = defineError({ code: 'BAD_REQUEST', message: '{name} must not contain null bytes', extra: param });
export const paramNestedTooDeeply = defineError({ code: 'BAD_REQUEST', message: '{name} is nested too deeply', extra: param });
/** A value the type cannot hold (an integer past 2^53); `value` is the text sent, cut to 40 characters. */
export const paramBadValue = defineError({ code: 'BAD_REQUEST', message: "Bad value for '{name}': {value}", extra: param });
export const unsupportedParameterCombination = defineError({
  code: 'BAD_REQUEST',
  message: 'Unsupported parameter combination: {names}',
  extra: (a: { names: string }) => ({ parameters: a.names }),
});
export const invalidParameters = defineError({ code: 'BAD_REQUEST', message: 'Invalid parameters' });
export const noNewData = defineError({ code: 'BAD_REQUEST', message: 'No new data supplied' });
export const clientPassedNoValues = defineError({ code: 'BAD_REQUEST', message: 'Client did not pass any new values.' });

// ---- Credentials and the realm ---------------------------------------------------------------

/** Zulip answers API requests without usable credentials with 401 and a Basic challenge. */
export const notLoggedIn = defineError({ code: 'UNAUTHORIZED', status: 401, message: 'Not logged in: API authentication or user session required', headers: () => BASIC_CHALLENGE });
export const invalidBasicAuthHeader = defineError({ code: 'UNAUTHORIZED', status: 401, message: 'Invalid authorization header for basic auth', headers: () => BASIC_CHALLENGE });
export const basicAuthRequired = defineError({ code: 'BAD_REQUEST', message: 'This endpoint requires HTTP basic authentication.' });
export const invalidApiKey = defineError({ code: 'INVALID_API_KEY', status: 401, message: 'Invalid API key' });
export const malformedApiKey = defineError({ code: 'INVALID_API_KEY', status: 401, message: 'Malformed API key' });
export const userDeactivated = defineError({ code: 'USER_DEACTIVATED', status: 401, message: 'Account is deactivated' });
/**
 * Zulip's RealmDeactivatedError: the message of its code (zerver/lib/exceptions.py); the example in
 * its OpenAPI document says "This organization is deactivated".
 */
export const realmDeactivated = defineError({ code: 'REALM_DEACTIVATED', status: 401, message: 'This organization has been deactivated' });
export const wrongSubdomain = defineError({ code: 'BAD_REQUEST', message: 'Account is not associated with this subdomain' });
export const authenticationFailed = defineError({ code: 'AUTHENTICATION_FAILED', status: 401, message: 'Your username or password is incorrect' });
export const invalidSubdomain = defineError({ code: 'NONEXISTENT_SUBDOMAIN', status: 404, message: 'Invalid subdomain' });
export const subdomainInUse = defineError({ code: 'BAD_REQUEST', message: 'Subdomain already in use. Please choose a different one.' });

/** Zulip's 429: retry-after in the body as float seconds, in the Retry-After header as whole seconds (rounded up). */
export const rateLimited = defineError({
  code: 'RATE_LIMIT_HIT',
  status: 429,
  message: 'API usage exceeded rate limit',
  extra: (a: { retryAfter: number; headers?: Record<string, string> }) => ({ 'retry-after': a.retryAfter }),
  headers: (a) => ({ ...a.headers, 'retry-after': String(Math.ceil(a.retryAfter)) }),
});

// ---- Roles and permissions -------------------------------------------------------------------

export const adminRequired = defineError({ code: 'UNAUTHORIZED_PRINCIPAL', message: 'Must be an organization administrator' });
export const ownerRequired = defineError({ code: 'UNAUTHORIZED_PRINCIPAL', message: 'Must be an organization owner' });
export const adminOrEmojiAuthorRequired = defineError({ code: 'UNAUTHORIZED_PRINCIPAL', message: 'Must be an organization administrator or emoji author' });
export const cannotChangeUserEmails = defineError({ code: 'UNAUTHORIZED_PRINCIPAL', message: 'User not authorized to change user emails' });
/** Zulip's JsonableError (BAD_REQUEST) for users, groups, bots and subscriptions alike. */
export const insufficientPermission = defineError({ code: 'BAD_REQUEST', message: 'Insufficient permission' });
export const notAllowedForGuests = defineError({ code: 'BAD_REQUEST', message: 'Not allowed for guest users' });
export const botsNotAccepted = defineError({ code: 'BAD_REQUEST', message: 'This endpoint does not accept bot requests.' });
export const notAuthorizedForQuery = defineError({ code: 'BAD_REQUEST', message: 'User not authorized for this query' });
export const lastOwnerRoleChange = defineError({ code: 'BAD_REQUEST', message: 'The owner permission cannot be removed from the only organization owner.' });
export const guestCannotBeAdmin = defineError({ code: 'BAD_REQUEST', message: 'Guests cannot be organization administrators' });
export const cannotDeactivateLastOwner = defineError({ code: 'BAD_REQUEST', message: 'Cannot deactivate the only organization owner' });
export const cannotDeactivateLastUser = defineError({
  code: 'CANNOT_DEACTIVATE_LAST_USER',
  message: 'Cannot deactivate the only {entity}',
  extra: (a: { entity: 'user' | 'organization owner'; is_last_owner: boolean }) => ({ is_last_owner: a.is_last_owner, entity: a.entity }),
});

// ---- Users, bots, settings -------------------------------------------------------------------

export const noSuchUser = defineError({ code: 'BAD_REQUEST', message: 'No such user' });
export const invalidUserId = defineError({ code: 'BAD_REQUEST', message: 'Invalid user ID {id}' });
/** The user-group form of the same error (zerver/lib/user_groups.py), with a colon. */
export const invalidGroupMemberId = defineError({ code: 'BAD_REQUEST', message: 'Invalid user ID: {id}' });
/** POST /fetch_api_key with a username that is not an email address (Zulip's validate_login_email: Django's message). */
export const enterValidEmail = defineError({ code: 'BAD_REQUEST', message: 'Enter a valid email address.' });
export const invalidEmail = defineError({ code: 'BAD_REQUEST', message: "Invalid email '{email}'" });
export const userNoLongerActive = defineError({ code: 'BAD_REQUEST', message: "'{email}' is no longer using Zulip." });
export const nameTooShort = defineError({ code: 'BAD_REQUEST', message: 'Name too short!' });
export const nameTooLong = defineError({ code: 'BAD_REQUEST', message: 'Name too long!' });
export const nameInvalidCharacters = defineError({ code: 'BAD_REQUEST', message: 'Invalid characters in name!' });
export const emailInUse = defineError({ code: 'BAD_REQUEST', message: 'Email is already in use.' });
/** Keel's own: user<id>@<realm host> is the API email of users who hide their address (domain/users.ts createUser). */
export const placeholderAddressReserved = defineError({ code: 'BAD_REQUEST', message: "Invalid email '{email}': addresses of the form user<id>@<realm host> stand for users whose address is hidden" });
export const botOwnerDeactivated = defineError({ code: 'BAD_REQUEST', message: 'Cannot reactivate a bot whose owner is deactivated.' });
export const profileFieldNotFound = defineError({ code: 'BAD_REQUEST', message: 'Field id {id} not found.' });
export const invalidBotType = defineError({ code: 'BAD_REQUEST', message: 'Invalid bot type' });
export const badBotName = defineError({ code: 'BAD_REQUEST', message: 'Bad name or username' });
export const usernameInUse = defineError({ code: 'BAD_REQUEST', message: 'Username already in use' });
export const nameInUse = defineError({ code: 'BAD_REQUEST', message: 'Name is already in use!' });
export const noSuchBot = defineError({ code: 'BAD_REQUEST', message: 'No such bot' });
export const botOwnerMissing = defineError({ code: 'BAD_REQUEST', message: 'Failed to change owner, no such user' });
export const botOwnerInactive = defineError({ code: 'BAD_REQUEST', message: 'Failed to change owner, user is deactivated' });
export const botOwnerIsBot = defineError({ code: 'BAD_REQUEST', message: "Failed to change owner, bots can't own other bots" });
export const passwordTooWeak = defineError({ code: 'BAD_REQUEST', message: 'New password is too weak!' });
export const wrongPassword = defineError({ code: 'BAD_REQUEST', message: 'Wrong password!' });
export const invalidAddress = defineError({ code: 'BAD_REQUEST', message: 'Invalid address.' });
export const alreadyHasAccount = defineError({ code: 'BAD_REQUEST', message: 'Already has an account.' });
export const invalidNotificationSound = defineError({ code: 'BAD_REQUEST', message: "Invalid notification sound '{sound}'" });
export const invalidBatchingPeriod = defineError({ code: 'BAD_REQUEST', message: 'Invalid email batching period: {seconds} seconds' });
export const emojiNameRequired = defineError({ code: 'BAD_REQUEST', message: 'Client must pass emoji_name if they pass either emoji_code or reaction_type.' });
export const statusTextTooLong = defineError({ code: 'BAD_REQUEST', message: 'status_text is too long (limit: {limit} characters)' });
export const invalidPresenceStatus = defineError({ code: 'BAD_REQUEST', message: 'Invalid status: {status}' });
export const presenceNotForBots = defineError({ code: 'BAD_REQUEST', message: 'Presence is not supported for bot users.' });
export const noPresenceData = defineError({ code: 'BAD_REQUEST', message: 'No presence data for {user}' });
export const cannotMuteSelf = defineError({ code: 'BAD_REQUEST', message: 'Cannot mute self' });
export const userAlreadyMuted = defineError({ code: 'BAD_REQUEST', message: 'User already muted' });
export const userNotMuted = defineError({ code: 'BAD_REQUEST', message: 'User is not muted' });
export const alertWordTooLong = defineError({ code: 'BAD_REQUEST', message: 'alert_words[{index}] is too long (limit: {limit} characters)' });

// ---- Organization settings, linkifiers, emoji ------------------------------------------------

export const realmNameRequired = defineError({ code: 'BAD_REQUEST', message: 'Organization name is required.', extra: () => ({ var_name: 'name' }) });
export const invalidLanguage = defineError({ code: 'BAD_REQUEST', message: "Invalid language '{language}'", extra: () => ({ var_name: 'default_language' }) });
export const linkifierNotFound = defineError({ code: 'BAD_REQUEST', message: 'Linkifier not found.' });
// Zulip reports a pattern RE2 refuses, and groups the pattern and template do not share, as Django
// form errors of the whole linkifier (__all__), a blank pattern and a bad template as the field's.
const formError = (field: string) => (_a: object, msg: string) => ({ errors: { [field]: [msg] } });
export const linkifierExists = defineError({ code: 'BAD_REQUEST', message: 'Linkifier with this Pattern and URL template already exists.', extra: formError('__all__') });
export const linkifierBadPattern = defineError({ code: 'BAD_REQUEST', message: 'Bad regular expression: {why}', extra: formError('__all__') });
export const linkifierGroupNotInPattern = defineError({ code: 'BAD_REQUEST', message: "Group '{group}' in URL template is not present in linkifier pattern.", extra: formError('__all__') });
export const linkifierGroupNotInTemplate = defineError({ code: 'BAD_REQUEST', message: "Group '{group}' in linkifier pattern is not present in URL template.", extra: formError('__all__') });
export const linkifierBadTemplate = defineError({ code: 'BAD_REQUEST', message: 'Invalid URL template.', extra: formError('url_template') });
export const linkifierBlankPattern = defineError({ code: 'BAD_REQUEST', message: 'This field cannot be blank.', extra: formError('pattern') });
export const linkifierOrderDuplicates = defineError({ code: 'BAD_REQUEST', message: 'The ordered list must not contain duplicated linkifiers' });
export const linkifierOrderIncomplete = defineError({ code: 'BAD_REQUEST', message: 'The ordered list must enumerate all existing linkifiers exactly once' });
export const emojiNotFound = defineError({ code: 'BAD_REQUEST', message: "Emoji '{name}' does not exist" });
/** DELETE /realm/emoji/{name} of an unknown emoji: Zulip's ResourceNotFoundError (404). */
export const realmEmojiNotFound = defineError({ code: 'BAD_REQUEST', status: 404, message: "Emoji '{name}' does not exist" });
export const invalidEmojiCode = defineError({ code: 'BAD_REQUEST', message: 'Invalid emoji code.' });
export const invalidEmojiName = defineError({ code: 'BAD_REQUEST', message: 'Invalid emoji name.' });
export const invalidCustomEmoji = defineError({ code: 'BAD_REQUEST', message: 'Invalid custom emoji.' });
export const invalidCustomEmojiName = defineError({ code: 'BAD_REQUEST', message: 'Invalid custom emoji name.' });
export const customEmojiDeactivated = defineError({ code: 'BAD_REQUEST', message: 'This custom emoji has been deactivated.' });
export const invalidEmojiType = defineError({ code: 'BAD_REQUEST', message: 'Invalid emoji type.' });
export const emojiNameOrCodeRequired = defineError({ code: 'BAD_REQUEST', message: 'At least one of the following arguments must be present: emoji_name, emoji_code' });
export const reactionExists = defineError({ code: 'REACTION_ALREADY_EXISTS', message: 'Reaction already exists.' });
export const reactionMissing = defineError({ code: 'REACTION_DOES_NOT_EXIST', message: "Reaction doesn't exist." });
export const webPublicDisabled = defineError({ code: 'BAD_REQUEST', message: 'Web-public channels are not enabled.' });

// ---- Channels and subscriptions --------------------------------------------------------------

export const channelNameMissing = defineError({
  code: 'STREAM_DOES_NOT_EXIST',
  message: "Channel '{name}' does not exist",
  extra: (a: { name: string }) => ({ stream: a.name }),
});
export const channelIdMissing = defineError({
  code: 'STREAM_DOES_NOT_EXIST',
  message: "Channel with ID '{id}' does not exist",
  extra: (a: { id: number }) => ({ stream_id: a.id }),
});
/** Unknown channels named in DELETE /users/me/subscriptions (zerver/lib/streams.py list_to_streams). */
export const channelsDoNotExist = defineError({ code: 'BAD_REQUEST', message: 'Channel(s) ({names}) do not exist' });
export const invalidChannelId = defineError({ code: 'BAD_REQUEST', message: 'Invalid channel ID' });
export const invalidChannelName = defineError({ code: 'BAD_REQUEST', message: "Invalid channel name '{name}'" });
/** Sending to an archived channel, or to one the sender may not post in (zerver/actions/message_send.py). */
export const notAuthorizedToSend = defineError({ code: 'BAD_REQUEST', message: "Not authorized to send to channel '{name}'" });
export const noPostPermission = defineError({ code: 'BAD_REQUEST', message: 'You do not have permission to post in this channel.' });
export const noAdministerPermission = defineError({ code: 'BAD_REQUEST', message: 'You do not have permission to administer this channel.' });
export const channelContentAccessRequired = defineError({ code: 'BAD_REQUEST', message: 'Channel content access is required.' });
export const unableToAccessChannel = defineError({ code: 'BAD_REQUEST', message: 'Unable to access channel ({name}).' });
export const channelNameEmpty = defineError({ code: 'BAD_REQUEST', message: "Channel name can't be empty." });
export const channelNameTooLong = defineError({ code: 'BAD_REQUEST', message: 'Channel name too long (limit: {limit} characters).' });
export const channelNameBadCharacter = defineError({ code: 'BAD_REQUEST', message: 'Invalid character in channel name, at position {position}.' });
export const channelAlreadyNamed = defineError({ code: 'BAD_REQUEST', message: 'Channel already has that name!' });
export const channelNameTaken = defineError({ code: 'BAD_REQUEST', message: "Channel name '{name}' is already taken." });
export const channelAlreadyArchived = defineError({ code: 'BAD_REQUEST', message: 'Channel is already deactivated' });
export const privateDefaultChannel = defineError({ code: 'BAD_REQUEST', message: 'Private channels cannot be made default.' });
export const defaultChannelPrivate = defineError({ code: 'BAD_REQUEST', message: 'A default channel cannot be private.' });
export const unknownSubscriptionProperty = defineError({ code: 'BAD_REQUEST', message: 'Unknown subscription property: {property}' });
export const notSubscribedToChannelId = defineError({ code: 'BAD_REQUEST', message: 'Not subscribed to channel ID {id}' });
export const badColor = defineError({ code: 'BAD_REQUEST', message: 'color is not a valid hex color code', extra: () => ({ var_name: 'color' }) });
/** The color of an entry of PATCH /users/me/subscriptions's `add` (Zulip checks it as "add.color"). */
export const badAddColor = defineError({ code: 'BAD_REQUEST', message: 'add.color is not a valid hex color code' });
export const chooseStreamOrStreamId = defineError({ code: 'BAD_REQUEST', message: "Please choose one: 'stream' or 'stream_id'." });
export const streamRequired = defineError({ code: 'BAD_REQUEST', message: "Please supply 'stream'." });
export const topicNotMuted = defineError({ code: 'BAD_REQUEST', message: 'Topic is not muted' });
export const noSuchTopic = defineError({ code: 'BAD_REQUEST', message: "No such topic '{topic}'" });

// ---- Messages --------------------------------------------------------------------------------

export const invalidMessages = defineError({ code: 'BAD_REQUEST', message: 'Invalid message(s)' });
export const cannotSendToMultipleChannels = defineError({ code: 'BAD_REQUEST', message: 'Cannot send to multiple channels' });
export const missingTopic = defineError({ code: 'BAD_REQUEST', message: 'Missing topic' });
export const noRecipients = defineError({ code: 'BAD_REQUEST', message: 'Message must have recipients' });
export const emptyMessage = defineError({ code: 'BAD_REQUEST', message: 'Message must not be empty' });
export const messageNullBytes = defineError({ code: 'BAD_REQUEST', message: 'Message must not contain null bytes' });
export const topicNullBytes = defineError({ code: 'BAD_REQUEST', message: 'Topic must not contain null bytes' });
export const topicBadCharacter = defineError({ code: 'BAD_REQUEST', message: 'Invalid character in topic, at position {position}!' });
/** GET /messages without an anchor and without use_first_unread_anchor (zerver/views/message_fetch.py). */
export const missingAnchor = defineError({ code: 'BAD_REQUEST', message: "Missing 'anchor' argument." });
export const tooManyMessages = defineError({ code: 'BAD_REQUEST', message: 'Too many messages requested (maximum {max}).' });
/** include_anchor=false with messages asked on both sides of the anchor (GET /messages, POST /messages/flags/narrow). */
export const anchorExcludedMidRange = defineError({ code: 'BAD_REQUEST', message: 'The anchor can only be excluded at an end of the range' });
export const flagNotEditable = defineError({ code: 'BAD_REQUEST', message: "Flag not editable: '{flag}'" });
export const invalidFlag = defineError({ code: 'BAD_REQUEST', message: "Invalid flag: '{flag}'" });
export const noEditPermission = defineError({ code: 'BAD_REQUEST', message: "You don't have permission to edit this message" });
export const noDeletePermission = defineError({ code: 'BAD_REQUEST', message: "You don't have permission to delete this message" });
export const noMovePermission = defineError({ code: 'BAD_REQUEST', message: "You don't have permission to move this message" });
export const deleteTimeLimitPassed = defineError({ code: 'BAD_REQUEST', message: 'The time limit for deleting this message has passed' });
export const editTimeLimitPassed = defineError({ code: 'BAD_REQUEST', message: 'The time limit for editing this message has passed' });
export const topicEditTimeLimitPassed = defineError({ code: 'BAD_REQUEST', message: "The time limit for editing this message's topic has passed." });
export const channelEditTimeLimitPassed = defineError({ code: 'BAD_REQUEST', message: "The time limit for editing this message's channel has passed" });
export const moveTimeLimitExceeded = defineError({
  code: 'MOVE_MESSAGES_TIME_LIMIT_EXCEEDED',
  message: 'You only have permission to move the {allowed}/{total} most recent messages in this topic.',
  extra: (a: { first_message_id_allowed_to_move: number | null; total_messages_in_topic: number; total_messages_allowed_to_move: number }) => ({
    first_message_id_allowed_to_move: a.first_message_id_allowed_to_move,
    total_messages_in_topic: a.total_messages_in_topic,
    total_messages_allowed_to_move: a.total_messages_allowed_to_move,
  }),
});
export const editingDisabled = defineError({ code: 'BAD_REQUEST', message: 'Your organization has turned off message editing' });
export const editHistoryDisabled = defineError({ code: 'BAD_REQUEST', message: 'Message edit history is disabled in this organization' });
export const contentWithChannelChange = defineError({ code: 'BAD_REQUEST', message: 'Cannot change message content while changing channel' });
export const directMessageTopic = defineError({ code: 'BAD_REQUEST', message: 'Direct messages cannot have topics.' });
export const directMessageMove = defineError({ code: 'BAD_REQUEST', message: 'Direct messages cannot be moved to channels.' });
export const nothingToChange = defineError({ code: 'BAD_REQUEST', message: 'Nothing to change' });
export const propagateModeWithoutTopic = defineError({ code: 'BAD_REQUEST', message: 'Invalid propagate_mode without topic edit' });
export const generalChatResolved = defineError({ code: 'BAD_REQUEST', message: 'General chat cannot be marked as resolved' });
export const cannotMentionGroup = defineError({ code: 'BAD_REQUEST', message: "You are not allowed to mention user group '{name}'." });

// ---- Narrows ---------------------------------------------------------------------------------

// Zulip's BadNarrowOperatorError: "Invalid narrow operator: " and what is wrong (zerver/lib/narrow.py).
export const narrowUnknownUser = defineError({ code: 'BAD_NARROW', message: 'Invalid narrow operator: unknown user {operand}' });
export const narrowUnknownChannel = defineError({ code: 'BAD_NARROW', message: 'Invalid narrow operator: unknown channel' });
export const narrowUnknownWebPublicChannel = defineError({ code: 'BAD_NARROW', message: 'Invalid narrow operator: unknown web-public channel {operand}' });
export const narrowBadChannelsOperand = defineError({ code: 'BAD_NARROW', message: 'Invalid narrow operator: invalid channels operand {operand}' });
export const narrowGuestAllPublic = defineError({ code: 'BAD_NARROW', message: 'Invalid narrow operator: guests cannot search all public channels' });
export const narrowBadTopic = defineError({ code: 'BAD_NARROW', message: 'Invalid narrow operator: invalid topic' });
export const narrowBadNear = defineError({ code: 'BAD_NARROW', message: 'Invalid narrow operator: invalid near operand' });
export const narrowBadWith = defineError({ code: 'BAD_NARROW', message: "Invalid narrow operator: Invalid 'with' operand {operand}" });
export const narrowUnknownIn = defineError({ code: 'BAD_NARROW', message: "Invalid narrow operator: unknown 'in' operand {operand}" });
export const narrowUnknownHas = defineError({ code: 'BAD_NARROW', message: "Invalid narrow operator: unknown 'has' operand {operand}" });
export const narrowBadMessageId = defineError({ code: 'BAD_NARROW', message: 'Invalid narrow operator: invalid message ID' });
export const narrowUnknownIs = defineError({ code: 'BAD_NARROW', message: "Invalid narrow operator: unknown 'is' operand {operand}" });
export const narrowBadSearch = defineError({ code: 'BAD_NARROW', message: 'Invalid narrow operator: invalid search operand' });
/** Zulip's NarrowBuilder.check_not_both_channel_and_dm_narrow (zerver/lib/narrow.py). */
export const narrowChannelAndDm = defineError({ code: 'BAD_NARROW', message: 'Invalid narrow operator: No message can be both a channel message and direct message' });
export const narrowUnknownOperator = defineError({ code: 'BAD_NARROW', message: 'Invalid narrow operator: unknown operator {operator}' });
export const queueNarrowOperator = defineError({ code: 'BAD_REQUEST', message: 'Operator {operator} not supported.' });
export const queueNarrowOperand = defineError({ code: 'BAD_REQUEST', message: 'Operand {operand} not supported.' });

// ---- Event queues, typing, drafts ------------------------------------------------------------

export const badEventQueueId = defineError({
  code: 'BAD_EVENT_QUEUE_ID',
  message: 'Bad event queue ID: {queue_id}',
  extra: (a: { queue_id: string }) => ({ queue_id: a.queue_id }),
});
// GET /events' refusals (zerver/tornado/event_queue.py fetch_events): plain JsonableErrors, not
// REQUEST_VARIABLE_MISSING, since Zulip checks these two by hand.
export const eventsMissingQueueId = defineError({ code: 'BAD_REQUEST', message: "Missing 'queue_id' argument" });
export const eventsMissingLastEventId = defineError({ code: 'BAD_REQUEST', message: "Missing 'last_event_id' argument" });
/** An acknowledgement older than what the queue already dropped. */
export const eventAlreadyPruned = defineError({ code: 'BAD_REQUEST', message: 'An event newer than {event_id} has already been pruned!' });
/** An acknowledgement of an id the queue never gave out. */
export const eventNotInQueue = defineError({ code: 'BAD_REQUEST', message: 'Event {event_id} was not in this queue' });
export const anonymousParameter = defineError({ code: 'BAD_REQUEST', message: "Invalid '{name}' parameter for anonymous request" });
export const privateTypingDisabled = defineError({ code: 'BAD_REQUEST', message: 'User has disabled typing notifications for direct messages' });
export const channelTypingDisabled = defineError({ code: 'BAD_REQUEST', message: 'User has disabled typing notifications for channel messages' });
export const missingChannelId = defineError({ code: 'BAD_REQUEST', message: 'Missing channel ID' });
export const missingTo = defineError({ code: 'BAD_REQUEST', message: "Missing 'to' argument" });
export const emptyToList = defineError({ code: 'BAD_REQUEST', message: "Empty 'to' list" });
/** Zulip's ResourceNotFoundError (404) for an unknown draft. */
export const draftMissing = defineError({ code: 'BAD_REQUEST', status: 404, message: 'Draft does not exist' });
export const draftsDisabled = defineError({ code: 'BAD_REQUEST', message: 'User has disabled synchronizing drafts.' });
export const negativeTimestamp = defineError({ code: 'BAD_REQUEST', message: 'Timestamp must not be negative.' });
export const draftChannelCount = defineError({ code: 'BAD_REQUEST', message: 'Must specify exactly 1 channel ID for channel messages' });

// ---- User groups -----------------------------------------------------------------------------

export const invalidGroup = defineError({ code: 'BAD_REQUEST', message: 'Invalid user group' });
export const invalidGroupId = defineError({ code: 'BAD_REQUEST', message: 'Invalid user group ID: {id}' });
export const groupNameEmpty = defineError({ code: 'BAD_REQUEST', message: 'User group name cannot be empty.' });
export const groupNameTooLong = defineError({ code: 'BAD_REQUEST', message: 'User group name cannot exceed {limit} characters.' });
export const groupNameReservedPrefix = defineError({ code: 'BAD_REQUEST', message: "User group name cannot start with '{prefix}'." });
export const groupDescriptionTooLong = defineError({ code: 'BAD_REQUEST', message: 'User group description cannot exceed {limit} characters.' });
export const groupNameTaken = defineError({ code: 'BAD_REQUEST', message: "User group '{name}' already exists." });
export const groupDeactivated = defineError({ code: 'BAD_REQUEST', message: 'User group is deactivated.' });
export const groupAlreadyDeactivated = defineError({ code: 'BAD_REQUEST', message: 'User group is already deactivated.' });
export const groupInUse = defineError({
  code: 'CANNOT_DEACTIVATE_GROUP_IN_USE',
  message: 'Cannot deactivate user group in use.',
  extra: (a: { objections: unknown[] }) => ({ objections: a.objections }),
});
export const alreadyMember = defineError({ code: 'BAD_REQUEST', message: 'User {id} is already a member of this group' });
export const notMember = defineError({ code: 'BAD_REQUEST', message: "There is no member '{id}' in this user group" });
export const alreadySubgroup = defineError({ code: 'BAD_REQUEST', message: 'User group {id} is already a subgroup of this group.' });
export const alreadySupergroup = defineError({ code: 'BAD_REQUEST', message: 'User group {id} is already a supergroup of this group.' });
export const notSubgroup = defineError({ code: 'BAD_REQUEST', message: 'User group {id} is not a subgroup of this group.' });
export const nothingToDoMembersOrSubgroups = defineError({ code: 'BAD_REQUEST', message: "Nothing to do. Specify at least one of 'add', 'delete', 'add_subgroups' or 'delete_subgroups'." });
export const nothingToDoMembers = defineError({ code: 'BAD_REQUEST', message: "Nothing to do. Specify at least one of 'add' or 'delete'." });
/** PATCH /users/me/subscriptions (zerver/views/streams.py update_subscriptions_backend): double quotes, unlike the user-group one. */
export const nothingToDoSubscriptions = defineError({ code: 'BAD_REQUEST', message: 'Nothing to do. Specify at least one of "add" or "delete".' });
export const settingMustBeSystemGroup = defineError({ code: 'BAD_REQUEST', message: "'{setting}' must be a system user group." });
export const settingGroupNotAllowed = defineError({ code: 'BAD_REQUEST', message: "'{setting}' setting cannot be set to '{group}' group." });
export const oldValueMismatch = defineError({ code: 'BAD_REQUEST', message: "'old' value does not match the expected value." });

// Realm rules (domain/realm-rules.ts). Zulip's send path words the topic rule without the full stop
// its edit path has (zerver/actions/message_send.py, message_edit.py).
export const topicsRequiredToSend = defineError({ code: 'BAD_REQUEST', message: 'Topics are required in this organization' });
export const topicsRequiredToEdit = defineError({ code: 'BAD_REQUEST', message: 'Topics are required in this organization.' });
export const emailChangesDisabled = defineError({ code: 'BAD_REQUEST', message: 'Email address changes are disabled in this organization.' });
export const namesNotUnique = defineError({ code: 'BAD_REQUEST', message: 'Unique names required in this organization.' });
export const directMessagesDisabled = defineError({ code: 'BAD_REQUEST', message: 'Direct messages are disabled in this organization.' });
export const directMessageUnauthorized = defineError({ code: 'BAD_REQUEST', message: 'This conversation does not include any users who can authorize it.' });
export const directMessageInitiationRefused = defineError({ code: 'BAD_REQUEST', message: 'You do not have permission to initiate direct message conversations.' });

// ---- Custom profile fields, code playgrounds, saved snippets, read receipts (issue 16) ----------
// Zulip's custom_profile_fields views and actions, and the validators (zerver/lib/validator.py)
// whose ValidationError texts they answer as they are, without var_name.
export const profileFieldLabelBlank = defineError({ code: 'BAD_REQUEST', message: 'Label cannot be blank.' });
export const profileFieldLabelExists = defineError({ code: 'BAD_REQUEST', message: 'A field with that label already exists.' });
export const profileFieldInvalidType = defineError({ code: 'BAD_REQUEST', message: 'Invalid field type.' });
export const profileFieldSummaryLimit = defineError({ code: 'BAD_REQUEST', message: 'Only {limit} custom profile fields can be displayed in the profile summary.' });
export const profileFieldSummaryUnsupported = defineError({ code: 'BAD_REQUEST', message: 'Field type not supported for display in profile summary.' });
export const profileFieldNoChoices = defineError({ code: 'BAD_REQUEST', message: 'Field must have at least one choice.' });
export const profileFieldDuplicateChoices = defineError({ code: 'BAD_REQUEST', message: 'Field must not have duplicate choices.' });
export const profileFieldDefaultExternal = defineError({ code: 'BAD_REQUEST', message: 'Default custom field cannot be updated.' });
export const profileFieldOrderInvalid = defineError({ code: 'BAD_REQUEST', message: 'Invalid order mapping.' });
export const profileFieldNotEditable = defineError({ code: 'BAD_REQUEST', message: 'You are not allowed to change this field. Contact an administrator to update it.' });
export const externalAccountInvalidType = defineError({ code: 'BAD_REQUEST', message: 'Invalid external account type' });
export const externalAccountNeedsPattern = defineError({ code: 'BAD_REQUEST', message: 'Custom external account must define URL pattern' });
export const externalAccountPatternUsername = defineError({ code: 'BAD_REQUEST', message: "URL pattern must contain '%(username)s'." });
export const valueNotString = defineError({ code: 'BAD_REQUEST', message: '{name} is not a string' });
export const valueNotList = defineError({ code: 'BAD_REQUEST', message: '{name} is not a list' });
export const valueNotInteger = defineError({ code: 'BAD_REQUEST', message: '{name} is not an integer' });
export const valueNotDict = defineError({ code: 'BAD_REQUEST', message: '{name} is not a dict' });
export const valueNotDate = defineError({ code: 'BAD_REQUEST', message: '{name} is not a date' });
export const valueNotUrl = defineError({ code: 'BAD_REQUEST', message: '{name} is not a URL' });
export const valueTooLong = defineError({ code: 'BAD_REQUEST', message: '{name} is too long (limit: {limit} characters)' });
export const valueBlank = defineError({ code: 'BAD_REQUEST', message: '{name} cannot be blank.' });
export const valueKeyMissing = defineError({ code: 'BAD_REQUEST', message: '{key} key is missing from {name}' });
export const valueUnexpectedKeys = defineError({ code: 'BAD_REQUEST', message: 'Unexpected arguments: {keys}' });
export const choiceKeyBlank = defineError({ code: 'BAD_REQUEST', message: "'value' cannot be blank." });
export const invalidChoice = defineError({ code: 'BAD_REQUEST', message: "'{value}' is not a valid choice for '{field}'." });
export const profileInvalidUserIds = defineError({ code: 'BAD_REQUEST', message: 'Invalid user IDs: {ids}' });
export const profileUserDeactivated = defineError({ code: 'BAD_REQUEST', message: 'User with ID {id} is deactivated' });
export const profileUserIsBot = defineError({ code: 'BAD_REQUEST', message: 'User with ID {id} is a bot' });
// Code playgrounds (zerver/views/realm_playgrounds.py; the model's full_clean answers as Django form
// errors: the first message, and every one in `errors` by field).
export const playgroundNotFound = defineError({ code: 'BAD_REQUEST', message: 'Invalid playground' });
export const playgroundBadLanguage = defineError({ code: 'BAD_REQUEST', message: 'Invalid characters in pygments language' });
export const playgroundBadTemplate = defineError({ code: 'BAD_REQUEST', message: 'Invalid URL template.', extra: formError('url_template') });
export const playgroundBlankName = defineError({ code: 'BAD_REQUEST', message: 'This field cannot be blank.', extra: formError('name') });
export const playgroundBlankLanguage = defineError({ code: 'BAD_REQUEST', message: 'This field cannot be blank.', extra: formError('pygments_language') });
export const playgroundBlankTemplate = defineError({ code: 'BAD_REQUEST', message: 'This field cannot be blank.', extra: formError('url_template') });
export const playgroundCodeMissing = defineError({ code: 'BAD_REQUEST', message: 'Missing the required variable "code" in the URL template', extra: formError('__all__') });
export const playgroundCodeNotAlone = defineError({ code: 'BAD_REQUEST', message: '"code" should be the only variable present in the URL template', extra: formError('__all__') });
export const playgroundExists = defineError({ code: 'BAD_REQUEST', message: 'Realm playground with this Realm, Pygments language and Name already exists.', extra: formError('__all__') });
// Saved snippets (zerver/actions/saved_snippets.py: ResourceNotFoundError, 404).
export const savedSnippetMissing = defineError({ code: 'BAD_REQUEST', status: 404, message: 'Saved snippet does not exist.' });
export const savedSnippetTitleEmpty = defineError({ code: 'BAD_REQUEST', message: 'Title cannot be empty.' });
export const savedSnippetContentEmpty = defineError({ code: 'BAD_REQUEST', message: 'Content cannot be empty.' });
// Read receipts (zerver/views/read_receipts.py).
export const readReceiptsDisabled = defineError({ code: 'BAD_REQUEST', message: 'Read receipts are disabled in this organization.' });
// Push notification devices and the push notification service (zerver/views/push_notifications.py,
// zerver/lib/push_notifications.py, zerver/lib/remote_server.py).
/** A text outside its pattern (typed_endpoint's string_pattern_mismatch): an APNs app id. */
export const paramBadFormat = defineError({ code: 'BAD_REQUEST', message: '{name} has invalid format', extra: param });
export const pushTokenInvalidLength = defineError({ code: 'BAD_REQUEST', message: 'Empty or invalid length token' });
export const apnsTokenInvalid = defineError({ code: 'BAD_REQUEST', message: 'Invalid APNS token' });
export const pushTokenMissing = defineError({ code: 'BAD_REQUEST', message: 'Token does not exist' });
export const pushDeviceUnknown = defineError({ code: 'INVALID_PUSH_DEVICE_TOKEN', message: 'Device not recognized' });
export const pushDeviceUnknownToBouncer = defineError({ code: 'INVALID_REMOTE_PUSH_DEVICE_TOKEN', message: 'Device not recognized by the push bouncer' });
/** Keel's: Zulip without a push service logs and answers success; Keel says why nothing was sent. */
export const pushNotConfigured = defineError({ code: 'BAD_REQUEST', message: 'Push notifications are not configured on this server.' });
/** Zulip's PushNotificationBouncerRetryLaterError (502). */
export const pushBouncerUnreachable = defineError({ code: 'BAD_REQUEST', status: 502, message: '{reason} while trying to connect to push notification bouncer' });
export const pushBouncerServerError = defineError({ code: 'BAD_REQUEST', status: 502, message: 'Received {status} from push notification bouncer' });
export const pushBouncerUnexpected = defineError({ code: 'BAD_REQUEST', status: 502, message: 'Push notification bouncer returned unexpected status code {status}' });
/** A 4xx of the bouncer: its own message, passed on as Zulip does (a never-registered token and the like). */
export const pushBouncerRefused = defineError({ code: 'BAD_REQUEST', message: '{msg}' });

// Video calls (zerver/views/video_calls.py) and the development login (zerver/views/development/dev_login.py).
export const bigBlueButtonNotConfigured = defineError({ code: 'BAD_REQUEST', message: 'BigBlueButton is not configured.' });
export const devLoginUnavailable = defineError({ code: 'BAD_REQUEST', message: 'Endpoint not available in production.' });
// ---- Invitations (endpoints/invites.ts, domain/invites.ts), Zulip 10.2's zerver/views/invite.py ----
export const inviteNoEmails = defineError({ code: 'BAD_REQUEST', message: 'You must specify at least one email address.' });
export const inviteInvalidChannel = defineError({ code: 'BAD_REQUEST', message: 'Invalid channel ID {channel_id}. No invites were sent.' });
export const inviteCannotSubscribeOthers = defineError({ code: 'BAD_REQUEST', message: 'You do not have permission to subscribe other users to channels.' });
export const noSuchInvitation = defineError({ code: 'BAD_REQUEST', message: 'No such invitation' });
export const invitationAlreadyRevoked = defineError({ code: 'BAD_REQUEST', message: 'Invitation has already been revoked' });
/** Zulip's InvitationError: the skipped addresses as [email, reason, deactivated] beside the message. */
type Skipped = { errors: [string, string, boolean][] };
const invitationFields = (sent: boolean, daily: boolean) => (a: Skipped) => ({ errors: a.errors, sent_invitations: sent, license_limit_reached: false, daily_limit_reached: daily });
export const invitesDailyLimit = defineError({
  code: 'INVITATION_FAILED',
  message: 'To protect users, Zulip limits the number of invitations you can send in one day. Because you have reached the limit, no invitations were sent.',
  extra: invitationFields(false, true),
});
export const invitesAccountTooNew = defineError({
  code: 'INVITATION_FAILED',
  message: 'Your account is too new to send invites for this organization. Ask an organization admin, or a more experienced user.',
  extra: invitationFields(false, false),
});
export const invitesNotValidated = defineError({
  code: 'INVITATION_FAILED',
  message: "Some emails did not validate, so we didn't send any invitations.",
  extra: invitationFields(false, false),
});
export const invitesNobody = defineError({ code: 'INVITATION_FAILED', message: "We weren't able to invite anyone.", extra: invitationFields(false, false) });
export const invitesSomeSkipped = defineError({
  code: 'INVITATION_FAILED',
  message: "Some of those addresses are already using Zulip, so we didn't send them an invitation. We did send invitations to everyone else!",
  extra: invitationFields(true, false),
});
// Scheduled messages (zerver/views/scheduled_messages.py, zerver/actions/scheduled_messages.py).
export const scheduledMessageMissing = defineError({ code: 'BAD_REQUEST', status: 404, message: 'Scheduled message does not exist' });
export const deliveryTimeNotInFuture = defineError({ code: 'BAD_REQUEST', message: 'Scheduled delivery time must be in the future.' });
export const scheduledRecipientRequired = defineError({ code: 'BAD_REQUEST', message: 'Recipient required when updating type of scheduled message.' });
export const scheduledTopicRequired = defineError({ code: 'BAD_REQUEST', message: 'Topic required when updating scheduled message type to stream.' });
export const scheduledAlreadySent = defineError({ code: 'BAD_REQUEST', message: 'Scheduled message was already sent' });
/** Recorded as a scheduled message's failure_message when it comes due more than 10 minutes late. */
export const scheduledTooLate = defineError({ code: 'BAD_REQUEST', message: 'Message could not be sent at the scheduled time.' });
/** zerver/lib/recipient_parsing.py: `to` of a scheduled channel message must be one id; of a direct one, a list of ids. */
export const invalidChannelIdType = defineError({ code: 'BAD_REQUEST', message: 'Invalid data type for channel ID' });
export const invalidRecipientsType = defineError({ code: 'BAD_REQUEST', message: 'Invalid data type for recipients' });
// Realm exports (endpoints/exports.ts; Zulip's zerver/views/realm_export.py).
export const exportRateLimited = defineError({ code: 'BAD_REQUEST', message: 'Exceeded rate limit.' });
export const exportTooLarge = defineError({ code: 'BAD_REQUEST', message: 'Please request a manual export from {email}.' });
export const invalidExportId = defineError({ code: 'BAD_REQUEST', message: 'Invalid data export ID' });
export const exportAlreadyDeleted = defineError({ code: 'BAD_REQUEST', message: 'Export already deleted' });
export const exportFailedNothingToDelete = defineError({ code: 'BAD_REQUEST', message: 'Export failed, nothing to delete' });
export const exportInProgress = defineError({ code: 'BAD_REQUEST', message: 'Export still in progress' });
// ---- Uploads (POST /user_uploads, downloads, /attachments) -----------------------------------

export const noFileToUpload = defineError({ code: 'BAD_REQUEST', message: 'You must specify a file to upload' });
export const oneFileAtATime = defineError({ code: 'BAD_REQUEST', message: 'You may only upload one file at a time' });
export const uploadTooLarge = defineError({ code: 'BAD_REQUEST', message: "File is larger than this server's configured maximum upload size ({max_size} MiB)." });
/** Keel's own quota on one user's uploads (domain/uploads.ts UPLOAD_BYTES_PER_USER); Zulip's realm quota has its own code. */
export const uploadQuotaReached = defineError({ code: 'BAD_REQUEST', message: 'Upload would exceed your upload quota ({limit} MiB).' });
export const invalidAttachment = defineError({ code: 'BAD_REQUEST', message: 'Invalid attachment' });
/** GET /user_uploads/temporary/...: a token that is not ours, has expired, or names no file. */
export const invalidUploadToken = defineError({ code: 'BAD_REQUEST', message: 'Invalid token' });
export const invalidUploadFilename = defineError({ code: 'BAD_REQUEST', message: 'Invalid filename' });
/** Zulip answers these as HTML pages (HttpResponseNotFound / HttpResponseForbidden); on /api/v1 Keel says the same in JSON. */
export const uploadMissing = defineError({ code: 'BAD_REQUEST', status: 404, message: 'This file does not exist or has been deleted.' });
export const uploadForbidden = defineError({ code: 'BAD_REQUEST', status: 403, message: 'You are not authorized to view this file.' });
// ---- The resumable upload endpoint /api/v1/tus (chat/tus.ts) ----------------------------------
// Answered in tusd's shape ({"message": ...}), with the statuses Zulip's tusd hooks give
// (zerver/views/tusd.py: specific 4xx codes, since uppy retries a plain 400).
export const tusUnauthenticated = defineError({ code: 'UNAUTHORIZED', status: 401, message: 'Unauthenticated upload' });
export const tusSizeDeferred = defineError({ code: 'BAD_REQUEST', status: 411, message: 'SizeIsDeferred is not supported' });
export const tusUploadTooLarge = defineError({ code: 'BAD_REQUEST', status: 413, message: 'Uploaded file is larger than the allowed limit of {max_file_size} MiB' });
/** Keel's bounds on one user's unfinished uploads (Zulip has none). */
export const tusTooManyUploads = defineError({ code: 'BAD_REQUEST', status: 429, message: 'Limit reached: a user can have at most {limit} unfinished uploads.' });
export const tusTooManyBytes = defineError({ code: 'BAD_REQUEST', status: 413, message: "Limit reached: a user's unfinished uploads can hold at most {limit_mib} MiB." });
export const tusFinishing = defineError({ code: 'BAD_REQUEST', status: 409, message: 'This upload is being completed.' });

// ---- Uploaded images: custom emoji, avatars, the realm icon and logos (domain/images.ts) -------
// Zulip's BadImageError (zerver/lib/thumbnail.py) and the checks of its upload views.
export const badImage = defineError({ code: 'BAD_IMAGE', message: 'Could not decode image; did you upload an image file?' });
export const imageTooLarge = defineError({ code: 'BAD_IMAGE', message: 'Image size exceeds limit.' });
export const emojiImageTooLarge = defineError({ code: 'BAD_IMAGE', message: 'Image size exceeds limit' });
export const invalidImageFormat = defineError({ code: 'BAD_IMAGE', message: 'Invalid image format' });
export const uploadedFileTooLarge = defineError({ code: 'BAD_REQUEST', message: 'Uploaded file is larger than the allowed limit of {max_file_size} MiB' });
export const emojiNameMissing = defineError({ code: 'BAD_REQUEST', message: 'Emoji name is missing' });
export const emojiNameEnd = defineError({ code: 'BAD_REQUEST', message: 'Emoji names must end with either a letter or digit.' });
export const emojiNameCharacters = defineError({
  code: 'BAD_REQUEST',
  message: 'Emoji names must contain only lowercase English letters, digits, spaces, dashes, and underscores.',
});
export const customEmojiExists = defineError({ code: 'BAD_REQUEST', message: 'A custom emoji with this name already exists.' });
export const exactlyOneFile = defineError({ code: 'BAD_REQUEST', message: 'You must upload exactly one file.' });
export const builtInEmojiOverride = defineError({ code: 'BAD_REQUEST', message: 'Only administrators can override built-in emoji.' });
export const exactlyOneAvatar = defineError({ code: 'BAD_REQUEST', message: 'You must upload exactly one avatar.' });
export const exactlyOneIcon = defineError({ code: 'BAD_REQUEST', message: 'You must upload exactly one icon.' });
export const exactlyOneLogo = defineError({ code: 'BAD_REQUEST', message: 'You must upload exactly one logo.' });
