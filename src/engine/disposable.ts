export * from '../base/disposable';
