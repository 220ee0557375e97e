'use strict';
// adamant-api (a dev-only oracle in test/console/oracle.test.ts) loads its Lisk wallet module at import; the oracle
// uses only ADAMANT's own crypto, so any call into Lisk's address functions is a mistake and says so.
const unused = (name) => () => {
  throw new Error(`@liskhq/lisk-cryptography.${name}: Lisk is not part of this project's oracle (test/support/lisk-cryptography-unused)`);
};
module.exports = {
  address: { getLisk32AddressFromPublicKey: unused('address.getLisk32AddressFromPublicKey'), getAddressFromPublicKey: unused('address.getAddressFromPublicKey') },
};
