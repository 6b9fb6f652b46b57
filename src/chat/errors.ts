// The Chat service's errors: the ChatError class and the catalog of every error it answers
// (src/chat/errors/catalog.ts). Importers take both from here.
export * from './errors/chat-error.js';
export * from './errors/catalog.js';
