/** A registered application (OAuth client), as stored. The secret exists only as its hash. */
export interface Client {
  clientId: string;
  secretHash: string;
  name: string;
  description: string;
  website: string;
  redirectUris: string[];
  /** The user account that registered it. */
  developerId: string;
  /** Shown on the consent page. */
  developerName: string;
  createdAt: string;
}
